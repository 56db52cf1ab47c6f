package server

import (
	"net"
	"net/http"

	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/service"
)

// mcpHandlers builds the MCP surface over the same services as the A2A
// bindings: the public /mcp handler (nil with --mcp=false), whose searches
// share the A2A search limit, and the admin socket's, which kfa mcp
// (stdio) reaches while this server holds the database, with no search
// limit (its callers are the operator's own).
func (s *Server) mcpHandlers(svc *service.Service) (http.Handler, error) {
	deps := mcpserver.Deps{
		Service:           svc,
		PublicURL:         s.cfg.PublicURL,
		Version:           s.cfg.Version,
		ContributorWrites: s.cfg.ContributorWrites,
		Log:               s.log,
		OnCall:            s.obs.m.MCPCalls(mcpserver.ToolNames),
	}
	var public http.Handler
	if s.cfg.MCP {
		srv, err := mcpserver.NewServer(deps)
		if err != nil {
			return nil, err
		}
		public = mcpserver.NewHandler(srv, mcpserver.HTTPOptions{
			Auth: svc, AllowedOrigins: s.cfg.MCPAllowedOrigins, PublicURL: s.cfg.PublicURL, ListenAddr: s.listenAddr,
			MaxBodyBytes: s.cfg.MaxBodyBytes, Log: s.log,
		})
	}
	// kfa mcp takes the same tokens as /mcp, OAuth access tokens too.
	tokens, policy := s.oauthDeps()
	local, err := service.New(service.Config{PublicURL: s.cfg.PublicURL, Version: s.cfg.Version},
		service.Deps{Tasks: s.core.Tasks, Discussions: s.core.Discussions, Search: s.index, Agents: s.core.Agents,
			Records: s.core.Records, Peers: s.core.Peers, AccessTokens: tokens, OAuth: policy})
	if err != nil {
		return nil, err
	}
	deps.Service = local
	srv, err := mcpserver.NewServer(deps)
	if err != nil {
		return nil, err
	}
	s.core.MCP = mcpserver.NewHandler(srv, mcpserver.HTTPOptions{
		Auth: local, MaxBodyBytes: s.cfg.MaxBodyBytes, Log: s.log,
	})
	return public, nil
}

// listenAddr is the public listener's address, nil before Start. The
// listener is set before it serves, so a request always sees it.
func (s *Server) listenAddr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}
