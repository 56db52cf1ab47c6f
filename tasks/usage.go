package tasks

import (
	"context"
	"fmt"

	"github.com/kfa-project/kfa/ratelimit"
)

// Usage is where one agent stands against the ask limits.
type Usage struct {
	// Asks is the ask rate's quota; nil when asks are not rate limited.
	Asks *ratelimit.Quota
	// Open is the agent's WORKING tasks; MaxOpen their bound (0: none).
	Open    int
	MaxOpen int
}

// QuotaAsk names the ask rate in a ratelimit.Quota.
const QuotaAsk = "ask"

// Usage reads where ownerID stands now: its ask quota and open tasks, from
// the same stored window and counter the ask transaction checks.
func (s *Service) Usage(ctx context.Context, ownerID string) (Usage, error) {
	st, err := s.store.AskUsage(ctx, ownerID)
	if err != nil {
		return Usage{}, fmt.Errorf("ask usage: %w", err)
	}
	u := Usage{Open: st.Open, MaxOpen: s.limits.MaxOpen}
	if q, ok := s.limits.AskRate.Quota(QuotaAsk, st.Window, s.now()); ok {
		u.Asks = &q
	}
	return u, nil
}

// Limits are the ask limits this service applies.
func (s *Service) Limits() Limits { return s.limits }
