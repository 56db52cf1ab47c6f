package discussions

import (
	"context"
	"fmt"

	"github.com/kfa-project/kfa/ratelimit"
)

// QuotaReply names the reply rate in a ratelimit.Quota.
const QuotaReply = "reply"

// ReplyQuota reads where agentID stands against the reply rate now;
// limited is false when replies are not rate limited.
func (s *Service) ReplyQuota(ctx context.Context, agentID string) (q ratelimit.Quota, limited bool, err error) {
	if !s.limits.ReplyRate.Enabled() {
		return q, false, nil
	}
	w, err := s.store.ReplyWindow(ctx, agentID)
	if err != nil {
		return q, false, fmt.Errorf("reply quota: %w", err)
	}
	q, limited = s.limits.ReplyRate.Quota(QuotaReply, w, s.now())
	return q, limited, nil
}

// MaxReplies is the bound on the replies one discussion holds (0: none).
func (s *Service) MaxReplies() int { return s.limits.MaxReplies }

// Limits are the reply limits this service applies.
func (s *Service) Limits() Limits { return s.limits }
