package server

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/federation"
	"github.com/kfa-project/kfa/metrics"
	"github.com/kfa-project/kfa/service"
)

// newFederation builds the federation runtime: the followers of the
// peers' feeds and the forwarder of asks, through the service; its
// metrics read the peers at each scrape.
func (s *Server) newFederation() {
	svc := service.NewFederation(service.FederationDeps{Peers: s.core.Peers, PublicURL: s.cfg.PublicURL, Limits: s.core.Limits})
	observer := s.obs.m.Peers(func() ([]metrics.PeerStat, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ps, err := s.core.Peers.List(ctx)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		out := make([]metrics.PeerStat, 0, len(ps))
		for _, p := range ps {
			if p.Purging {
				continue
			}
			out = append(out, metrics.PeerStat{Name: p.Name, State: string(p.State()), LagSeconds: p.Lag(now).Seconds(),
				Documents: p.Documents})
		}
		return out, nil
	})
	s.fed = federation.NewRunner(svc, federation.Options{Poll: s.cfg.PeerPoll, Changes: s.core.Store, Cursors: s.core.Store,
		Log: s.log, Observer: observer})
}
