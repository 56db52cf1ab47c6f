package service

import (
	"encoding/json"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

// Info returns the JSON of GET /a2a/info, made once in New: what this
// server speaks and where, with no store read.
func (s *Service) Info() []byte { return s.pub.Load().info }

// buildInfo makes the connectivity check from the card, so the two name
// the same endpoints.
func buildInfo(cfg Config, card a2a.AgentCard, signed bool) ([]byte, error) {
	in := api.Info{
		Name:             card.Name,
		Version:          card.Version,
		ProtocolVersions: []string{a2a.Version10, a2a.Version03},
		AgentCard:        cfg.PublicURL + "/.well-known/agent-card.json",
		AgentCard03:      cfg.PublicURL + Card03Path,
		MCP:              cfg.MCPURL,
	}
	if signed {
		in.JWKS = cfg.PublicURL + JWKSPath
	}
	if o := cfg.OAuth; o != nil {
		in.OAuth = &api.InfoOAuth{ResourceMetadata: o.ResourceMetadataURL, MCPResourceMetadata: o.MCPResourceMetadataURL,
			Scopes: []string{"read", "post"}}
		for _, is := range o.Issuers {
			in.OAuth.Issuers = append(in.OAuth.Issuers, is.Issuer)
		}
	}
	for _, i := range card.SupportedInterfaces {
		in.Interfaces = append(in.Interfaces, api.InfoInterface{URL: i.URL, ProtocolBinding: i.ProtocolBinding, ProtocolVersion: i.ProtocolVersion})
	}
	return jsonClipped(in)
}

// jsonClipped is json.Marshal with the slice's capacity clipped: a writer
// that appends a newline must copy, not write into the shared array.
func jsonClipped(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return b[:len(b):len(b)], err
}
