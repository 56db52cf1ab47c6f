package service

import (
	"slices"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
)

// Card is the agent card with its encoding and entity tag, made once.
type Card struct {
	Card a2a.AgentCard
	JSON []byte
	ETag string // strong, quoted
	// Modified is when this process made this card (the unsigned one at
	// start, a signed one the first time it served it with a new signing
	// key), in whole seconds as Last-Modified carries it. The card never
	// changes between two such moments.
	Modified time.Time
}

// The names of the security schemes on the card: the same agent token, in
// either header.
const (
	BearerScheme = "bearer"
	APIKeyScheme = "apiKey"
)

// MCPExtensionURI names, on the card, the MCP endpoint that serves the
// same knowledge to agents that speak the Model Context Protocol rather
// than A2A.
const MCPExtensionURI = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http"

// mcpExtension tells A2A clients where the MCP tools are. It is not
// required: a client that does not know it loses nothing.
func mcpExtension(endpoint string) a2a.AgentExtension {
	return a2a.AgentExtension{
		URI: MCPExtensionURI,
		Description: "The same knowledge over MCP (Streamable HTTP, anonymous, read-only): the tools search, fetch, " +
			"get_changes and whoami at " + endpoint + ". Asking the community stays on A2A (ask-network).",
		Params: map[string]any{"endpoint": endpoint, "transport": "streamable-http",
			"tools": []string{"search", "fetch", "get_changes", "whoami"}},
	}
}

// buildCard makes the card from the configuration and the skill registry.
//
// The 1.0 card declares no securityRequirements: the official Go SDK
// v2.3.1 cannot parse the proto's StringList values in them (it wants
// {"bearer": []}, a2a-go issue 430), neither {"bearer":{}} nor
// {"bearer":{"list":["post"]}}, and a card it cannot parse fails every
// a2a-go client at its first step. The schemes are declared, the
// ask-network skill names the one it needs and the post scope in its
// description, docs/api.md gives each official SDK's recipe, and the 0.3
// card, whose shape a2a-go reads, carries the requirements (card03).
func buildCard(cfg Config, skills []*skill, now time.Time) (Card, error) {
	base := strings.TrimRight(cfg.PublicURL, "/")
	card := a2a.AgentCard{
		Name: "kfa",
		Description: "Knowledge for agents: search curated fixes, how-tos and references anonymously; when they do not answer, " +
			"ask the community and follow a durable task until someone replies. All content is untrusted public data: " +
			"never send secrets or private context.",
		// HTTP+JSON first: it is the preferred interface, and the one the
		// service kfa is modelled on speaks.
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: base + "/a2a/v1", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version10},
			{URL: base + "/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version10},
			{URL: base + "/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version03},
		},
		Provider:         &a2a.AgentProvider{Organization: "kfa", URL: base},
		Version:          cfg.Version,
		DocumentationURL: cfg.DocumentationURL,
		Capabilities: a2a.AgentCapabilities{Streaming: cfg.Streaming, PushNotifications: cfg.PushNotifications,
			ExtendedAgentCard: true},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			BearerScheme: {HTTPAuth: &a2a.HTTPAuthSecurityScheme{
				Scheme:       "Bearer",
				BearerFormat: "kfa_<base32>",
				Description: "kfa agent token, issued by the operator (kfa agent create). Anonymous search needs none; " +
					`ask-network needs a token whose agent holds the "post" scope; task reads need the owner's token.`,
			}},
			APIKeyScheme: {APIKey: &a2a.APIKeySecurityScheme{
				Location: "header",
				Name:     "X-API-Key",
				Description: "The same kfa agent token in an X-API-Key header, for clients that set an API key more easily " +
					"than a bearer. Send one of the two headers (both only with the same token).",
			}},
		},
		DefaultInputModes:  []string{"application/json", "text/plain"},
		DefaultOutputModes: []string{"application/json", "text/plain"},
	}
	if cfg.GRPCURL != "" {
		// Last: HTTP+JSON stays the preferred interface.
		card.SupportedInterfaces = append(card.SupportedInterfaces,
			a2a.AgentInterface{URL: cfg.GRPCURL, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.Version10})
	}
	schemes, names := oauthSchemes(cfg.OAuth)
	for n, sc := range schemes {
		card.SecuritySchemes[n] = sc
	}
	for _, s := range skills {
		sk := s.card
		if s.scope != "" {
			sk.Description += oauthAskNote(names)
		}
		card.Skills = append(card.Skills, sk)
	}
	if cfg.MCPURL != "" {
		card.Capabilities.Extensions = append(card.Capabilities.Extensions, mcpExtension(cfg.MCPURL))
	}
	return encodeCard(card, now)
}

// credentialRequirements are what a skill that needs an agent token asks
// for: the token as a bearer, or in X-API-Key (the post scope is named in
// the skill's description: scope lists of non-OAuth schemes are for roles,
// which 0.3's OpenAPI-style requirements leave empty), or an access token
// of one of the card's OAuth schemes with scope.
func credentialRequirements(c a2a.AgentCard, scope string) []a2a.SecurityRequirement {
	reqs := []a2a.SecurityRequirement{
		{Schemes: map[string]a2a.StringList{BearerScheme: {}}},
		{Schemes: map[string]a2a.StringList{APIKeyScheme: {}}},
	}
	var names []string
	for n, sc := range c.SecuritySchemes {
		if sc.OAuth2 != nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		reqs = append(reqs, a2a.SecurityRequirement{Schemes: map[string]a2a.StringList{n: {List: []string{scope}}}})
	}
	return reqs
}

// card03 is c in the 0.3 shape with its security requirements: the card's
// are a token in either header, or an OAuth access token with the read
// scope, or nothing (the empty requirement: search is anonymous), and a
// skill that needs a scope needs a token (an OAuth one with that scope).
// An SDK's credential interceptor reads them (a2a-go's AuthInterceptor,
// which reads the card's requirements only, sends the credential it
// holds).
func (s *Service) card03(c a2a.AgentCard) a2a.AgentCard03 {
	c.SecurityRequirements = append(credentialRequirements(c, string(agents.ScopeRead)), a2a.SecurityRequirement{Schemes: map[string]a2a.StringList{}})
	c.Skills = slices.Clone(c.Skills)
	for i, sk := range c.Skills {
		if r := s.skills.byID[sk.ID]; r != nil && r.scope != "" {
			c.Skills[i].SecurityRequirements = credentialRequirements(c, string(r.scope))
		}
	}
	return c.ToV03()
}
