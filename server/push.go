package server

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/webhook"
)

// openPush makes the first signing key when the file has none and, with
// push notifications on, the delivery worker and its metrics. Nothing is
// sent until startPush.
func (s *Server) openPush() error {
	if err := s.core.Signer.Ensure(context.Background()); err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	if !s.cfg.Push {
		return nil
	}
	sender := webhook.NewSender(webhook.SenderConfig{
		Policy: s.core.Push.Policy(), Timeout: s.cfg.PushTimeout, Resolver: s.cfg.PushResolver,
		UserAgent: "kfa/" + s.cfg.Version + " (push notifications)",
	})
	s.worker = webhook.NewWorker(s.core.Store, s.core.Signer, sender, webhook.Config{
		Concurrency: s.cfg.PushConcurrency,
		Retry:       push.RetryPolicy{First: s.cfg.PushFirstRetry, For: s.cfg.PushRetryFor},
		Keep:        s.cfg.PushKeep,
		Observer:    observers{s.obs.m.Push(), s.cfg.PushObserver},
		Log:         s.log,
	})
	db := s.core.Store
	s.obs.m.WatchOutbox(func() (push.OutboxStats, error) { return db.OutboxStats(context.Background()) }, time.Now)
	return nil
}

// pushService is the config service the agent offers, nil with push
// notifications off.
func (s *Server) pushService() *push.Service {
	if !s.cfg.Push {
		return nil
	}
	return s.core.Push
}

// observers hears of an attempt for each of its non-nil observers.
type observers []webhook.Observer

func (os observers) Attempted(d push.Delivery, a push.Attempt) {
	for _, o := range os {
		if o != nil {
			o.Attempted(d, a)
		}
	}
}
