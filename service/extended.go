package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/ratelimit"
)

// CallerExtensionURI names the extension the extended card adds: who the
// caller is and what it may still do.
const CallerExtensionURI = "urn:kfa:extension:caller:v1"

// CallerInfo is the params of the caller extension on the extended card.
// An anonymous caller has no agent: no agentId or name, no scopes, the
// skills that need no credential and the limits of its address.
type CallerInfo struct {
	Authenticated bool     `json:"authenticated"`
	AgentID       string   `json:"agentId,omitempty"`
	Name          string   `json:"name,omitempty"`
	Scopes        []string `json:"scopes"`
	// Skills are the card's skills this caller may use now.
	Skills []string `json:"skills"`
	Limits Limits   `json:"limits"`
	// Reputation is the caller's own reputation (absent for an anonymous
	// caller, or where the server keeps none).
	Reputation *int64 `json:"reputation,omitempty"`
}

// Limits are the caller's limits; a limit that is off is absent.
type Limits struct {
	Requests *RateStatus `json:"requests,omitempty"` // authenticated requests per window
	Searches *RateStatus `json:"searches,omitempty"`
	Asks     *RateStatus `json:"asks,omitempty"`
	Replies  *RateStatus `json:"replies,omitempty"`
	// Votes is the votes and verifications (one budget).
	Votes *RateStatus `json:"votes,omitempty"`
	// OpenTasks are the caller's WORKING tasks against their bound.
	OpenTasks *CountStatus `json:"openTasks,omitempty"`
	// RepliesPerDiscussion bounds the replies one discussion takes.
	RepliesPerDiscussion *int `json:"repliesPerDiscussion,omitempty"`
}

// RateStatus is where the caller stands against a rate: Limit events per
// WindowSeconds, Remaining allowed now, the whole quota back after
// ResetSeconds.
type RateStatus struct {
	Limit         int `json:"limit"`
	WindowSeconds int `json:"windowSeconds"`
	Remaining     int `json:"remaining"`
	ResetSeconds  int `json:"resetSeconds"`
}

// CountStatus is where the caller stands against a bound.
type CountStatus struct {
	Limit     int `json:"limit"`
	Used      int `json:"used"`
	Remaining int `json:"remaining"`
}

func rateStatus(q ratelimit.Quota) *RateStatus {
	return &RateStatus{Limit: q.Limit, WindowSeconds: int(q.Window.Seconds()), Remaining: q.Remaining,
		ResetSeconds: int((q.Reset + time.Second - 1) / time.Second)}
}

// ExtendedCard is GetExtendedAgentCard: the public card plus the caller
// extension, read now from the limits' stored windows and counters. An
// anonymous caller gets the card it may use: the skills that need no
// credential and its address's search limit (official clients, the JS
// SDK's getAgentCard() among them, ask for it before they authenticate).
func (s *Service) ExtendedCard(ctx context.Context, c Caller) (a2a.AgentCard, error) {
	info := s.anonymousInfo(c)
	if c.Agent != nil {
		var err error
		if info, err = s.callerInfo(ctx, c, c.Agent); err != nil {
			return a2a.AgentCard{}, err
		}
	}
	b, err := json.Marshal(info)
	if err != nil {
		return a2a.AgentCard{}, err
	}
	var params map[string]any
	if err := json.Unmarshal(b, &params); err != nil {
		return a2a.AgentCard{}, err
	}
	card := s.Card().Card
	card.Capabilities.Extensions = append(slices.Clip(card.Capabilities.Extensions), a2a.AgentExtension{
		URI:         CallerExtensionURI,
		Description: "Who this card was made for (authenticated false: an anonymous caller), and what it may still do: its scopes, the skills open to it, its limits and what is left of each (absent: no limit), and its reputation.",
		Params:      params,
	})
	return card, nil
}

// ExtendedCard03 is ExtendedCard in the 0.3 shape, with the 0.3 card's
// security requirements: a 0.3 client that takes the extended card for its
// card keeps sending its credential.
func (s *Service) ExtendedCard03(ctx context.Context, c Caller) (a2a.AgentCard03, error) {
	card, err := s.ExtendedCard(ctx, c)
	if err != nil {
		return a2a.AgentCard03{}, err
	}
	return s.card03(card), nil
}

// anonymousInfo is what a caller without a credential may do.
func (s *Service) anonymousInfo(c Caller) CallerInfo {
	info := CallerInfo{Scopes: []string{}}
	for _, sk := range s.skills.enabled() {
		if sk.scope == "" {
			info.Skills = append(info.Skills, sk.card.ID)
		}
	}
	if l := s.deps.SearchRate; l != nil {
		if q, ok := l.Quota(QuotaSearch, c.limitKey()); ok {
			info.Limits.Searches = rateStatus(q)
		}
	}
	return info
}

func (s *Service) callerInfo(ctx context.Context, c Caller, ag *agents.Agent) (CallerInfo, error) {
	info := CallerInfo{Authenticated: true, AgentID: ag.ID, Name: ag.Name, Scopes: ag.ScopeStrings()}
	for _, sk := range s.skills.enabled() {
		if sk.scope == "" || ag.Has(sk.scope) {
			info.Skills = append(info.Skills, sk.card.ID)
		}
	}
	if l := s.deps.RequestRate; l != nil {
		if q, ok := l.Quota("", "agent:"+ag.ID); ok {
			info.Limits.Requests = rateStatus(q)
		}
	}
	if l := s.deps.SearchRate; l != nil {
		if q, ok := l.Quota(QuotaSearch, c.limitKey()); ok {
			info.Limits.Searches = rateStatus(q)
		}
	}
	if s.deps.Trust != nil {
		rep, err := s.Reputation(ctx, ag.ID)
		if err != nil {
			return info, fmt.Errorf("extended card: %w", err)
		}
		info.Reputation = &rep
	}
	if !s.cfg.ContributorWrites {
		return info, nil
	}
	if s.deps.Trust != nil {
		q, limited, err := s.deps.Trust.Quota(ctx, ag.ID)
		if err != nil {
			return info, fmt.Errorf("extended card: %w", err)
		}
		if limited {
			info.Limits.Votes = rateStatus(q)
		}
	}
	u, err := s.deps.Tasks.Usage(ctx, ag.ID)
	if err != nil {
		return info, fmt.Errorf("extended card: %w", err)
	}
	if u.Asks != nil {
		info.Limits.Asks = rateStatus(*u.Asks)
	}
	if u.MaxOpen > 0 {
		info.Limits.OpenTasks = &CountStatus{Limit: u.MaxOpen, Used: u.Open, Remaining: max(u.MaxOpen-u.Open, 0)}
	}
	q, limited, err := s.deps.Discussions.ReplyQuota(ctx, ag.ID)
	if err != nil {
		return info, fmt.Errorf("extended card: %w", err)
	}
	if limited {
		info.Limits.Replies = rateStatus(q)
	}
	if n := s.deps.Discussions.MaxReplies(); n > 0 {
		info.Limits.RepliesPerDiscussion = &n
	}
	return info, nil
}
