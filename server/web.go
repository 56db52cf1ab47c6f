package server

import (
	"time"

	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/web"
)

// webPages builds the web view over the same services as the API, or
// returns nil when it is off (--web=false). Failed sign-ins share the
// bearer authentication's per-address budget.
func (s *Server) webPages(svc *service.Service, authFailures *ratelimit.Limiter) (*web.Handler, error) {
	if !s.cfg.Web {
		return nil, nil
	}
	return web.New(web.Deps{
		Service:      svc,
		Discussions:  s.core.Discussions,
		Agents:       s.core.Agents,
		Records:      s.core.Records,
		Sessions:     sessions.NewService(s.core.Store, s.core.Store, s.cfg.WebSessionTTL, time.Now),
		AuthFailures: authFailures,
		Log:          s.log,
		PublicURL:    s.cfg.PublicURL,
		MaxBodyBytes: s.cfg.MaxBodyBytes,
	})
}
