package server

import (
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/web"
)

// webPages builds the web view over the same service as the API, or
// returns nil when it is off (--web=false).
func (s *Server) webPages(svc *service.Service) (*web.Handler, error) {
	if !s.cfg.Web {
		return nil, nil
	}
	return web.New(web.Deps{Service: svc, Log: s.log, PublicURL: s.cfg.PublicURL, MaxBodyBytes: s.cfg.MaxBodyBytes,
		HighlightBudget: s.cfg.WebHighlightBudget})
}
