package server

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/tasks"
)

// The process's in-memory followers of the change log share one runner
// (the live follower) and one read of the log per pass: the credential
// cache, the stream broker, the metrics, and the push worker's wake-up.
// It starts at the log's head before the server serves, so every event
// committed after that reaches them, whichever process committed it.
// The search index follows on a runner of its own, from the durable
// cursor kept in the index.

// credFreshness is how recently the live follower must have read the
// whole log for the credential cache to be trusted: a revocation or
// rotation made through any process is then refused here within a
// second (the follower reads on every wake-up and at least every
// changelog.DefaultTick).
const credFreshness = 800 * time.Millisecond

// newLive makes the live follower and gives the agents service its
// credential cache, which trusts itself only while the follower is fresh.
func (s *Server) newLive() {
	var live *changelog.Runner
	creds := agents.NewCredCache(func() bool { return live.Fresh(credFreshness) })
	s.core.Agents.UseCache(creds)
	anyOwner := func(ctx context.Context, id string) (tasks.Task, error) { return s.core.Store.GetTask(ctx, "", id) }
	parts := []changelog.Follower{creds, s.broker.Follower(anyOwner), s.obs.m.Follower()}
	if s.worker != nil {
		w := s.worker
		parts = append(parts, changelog.FollowerFunc(func(_ context.Context, evs []changelog.Event) error {
			for _, e := range evs {
				if e.Kind == changelog.DeliveryDue {
					w.Kick() // coalesces: one wake-up for the batch
					return nil
				}
			}
			return nil
		}))
	}
	live = changelog.NewRunner(s.core.Store, changelog.NewFanout(parts...), changelog.RunnerOptions{Name: "live", Tick: s.cfg.FollowTick, Log: s.log})
	s.live, s.creds = live, creds
}

// startLive starts the live follower at the log's head.
func (s *Server) startLive() error {
	ctx, cancel := context.WithTimeout(context.Background(), postgresOpenTimeout)
	defer cancel()
	if err := s.live.Start(ctx); err != nil {
		return fmt.Errorf("follow the change log: %w", err)
	}
	return nil
}

// SyncFollowers returns once this process's followers (the live one and
// the search index) have applied every change committed before the call,
// by any process: tests and benchmarks wait on it instead of polling.
func (s *Server) SyncFollowers(ctx context.Context) error {
	if err := s.live.Sync(ctx); err != nil {
		return err
	}
	if err := s.fed.Sync(ctx); err != nil {
		return err
	}
	return s.index.Sync(ctx)
}

// FollowedPast returns once this process's followers (the live one and
// the search index) have applied the change log's event at pos, or one
// after it, without asking them for a pass as SyncFollowers does: only
// a wake-up (a commit here, or another process's NOTIFY) or their tick
// brings it. The tests of the wake-up path wait on it with a tick
// (Config.FollowTick) longer than their patience.
func (s *Server) FollowedPast(ctx context.Context, pos changelog.Position) error {
	if err := s.live.WaitPast(ctx, pos); err != nil {
		return err
	}
	return s.index.WaitPast(ctx, pos)
}

// CredCache is the process's credential cache (for tests).
func (s *Server) CredCache() *agents.CredCache { return s.creds }
