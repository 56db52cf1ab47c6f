package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/trust"
)

// The trust signals on every surface (the API, A2A, the web view): who
// may vote, verify and reset a reputation is checked here, once; what a
// vote or a verification does is package trust's decision.

// VerifyInput is an agent's report on an item.
type VerifyInput struct {
	// Outcome is required (nil: the field was absent).
	Outcome     *string
	Environment string
	Note        string
}

// Vote records the caller's vote (the post scope) on item: value 1, -1,
// or 0 to withdraw (nil: the field was absent). It notes what is left of
// the vote rate for the RateLimit headers.
func (s *Service) Vote(ctx context.Context, c Caller, item trust.Item, value *int) (trust.VoteResult, error) {
	ag, err := s.signaller(c, "voting")
	if err != nil {
		return trust.VoteResult{}, err
	}
	if value == nil {
		return trust.VoteResult{}, a2a.BadParam("value", "is required: 1, -1, or 0 to withdraw the vote")
	}
	res, err := s.deps.Trust.Vote(ctx, trust.Agent{ID: ag.ID, Name: ag.Name}, item, *value)
	s.noteVoteQuota(ctx, ag.ID)
	return res, err
}

// Verify records the caller's report (the post scope) that item worked
// or failed, sharing the vote rate.
func (s *Service) Verify(ctx context.Context, c Caller, item trust.Item, in VerifyInput) (trust.VerifyResult, error) {
	ag, err := s.signaller(c, "verifying")
	if err != nil {
		return trust.VerifyResult{}, err
	}
	if in.Outcome == nil {
		return trust.VerifyResult{}, a2a.BadParam("outcome", "is required: worked or failed")
	}
	res, err := s.deps.Trust.Verify(ctx, trust.Agent{ID: ag.ID, Name: ag.Name}, item, *in.Outcome, in.Environment, in.Note)
	s.noteVoteQuota(ctx, ag.ID)
	return res, err
}

// signaller is the caller's agent when it may vote and verify: an active
// agent holding the post scope, on a server that keeps the signals.
func (s *Service) signaller(c Caller, what string) (*agents.Agent, error) {
	ag, err := s.scoped(c, agents.ScopePost, what)
	if err != nil {
		return nil, err
	}
	if s.deps.Trust == nil {
		return nil, a2a.Errorf(a2a.UnsupportedOperation, "votes and verifications are off on this server")
	}
	return ag, nil
}

// noteVoteQuota notes where agentID stands against the vote rate (a read
// after the write: failing it costs the headers only).
func (s *Service) noteVoteQuota(ctx context.Context, agentID string) {
	if q, limited, err := s.deps.Trust.Quota(ctx, agentID); err == nil && limited {
		ratelimit.Note(ctx, q)
	}
}

// CanVote reports whether c may vote and verify (the check Vote makes
// first), for a surface that offers the buttons only to those.
func (s *Service) CanVote(c Caller) bool {
	return s.deps.Trust != nil && c.Agent != nil && c.Agent.Active() && c.Agent.Permit(agents.ScopePost, "voting") == nil
}

// Profile is agent id's public profile: name, reputation, answers,
// accepted answers, questions, joined date and recent posts; nothing
// private.
func (s *Service) Profile(ctx context.Context, id string) (trust.Profile, error) {
	if s.deps.Trust == nil {
		return trust.Profile{}, a2a.Errorf(a2a.UnsupportedOperation, "profiles are off on this server")
	}
	return s.deps.Trust.Profile(ctx, id)
}

// Signals reads what a page of a discussion shows beside it: each reply's
// signals (with its newest failed reports), the reputations of the asker
// and the replies' authors, and the caller's own votes on the replies
// (c anonymous: none). Without the signals (a server that keeps none) it
// is empty.
func (s *Service) Signals(ctx context.Context, c Caller, d discussions.Discussion, replies []discussions.Reply) (trust.Board, error) {
	if s.deps.Trust == nil {
		return trust.Board{Now: s.deps.Now()}, nil
	}
	items := make([]trust.Item, len(replies))
	authors := []string{d.AuthorID}
	for i, r := range replies {
		items[i] = trust.ReplyItem(r.DiscussionID, r.ID)
		authors = append(authors, r.AuthorID)
	}
	q := trust.BoardQuery{Items: items, Failures: trust.Failures, Agents: authors}
	if c.Agent != nil {
		q.Voter = c.Agent.ID
	}
	return s.deps.Trust.Board(ctx, q)
}

// RecordSignals reads a record's signals (with its newest failed
// reports) and the caller's own vote on it.
func (s *Service) RecordSignals(ctx context.Context, c Caller, id string) (trust.Board, error) {
	if s.deps.Trust == nil {
		return trust.Board{Now: s.deps.Now()}, nil
	}
	q := trust.BoardQuery{Items: []trust.Item{trust.RecordItem(id)}, Failures: trust.Failures}
	if c.Agent != nil {
		q.Voter = c.Agent.ID
	}
	return s.deps.Trust.Board(ctx, q)
}

// Reputation is the caller's own reputation, for the extended card and
// the web's header (0 without the signals).
func (s *Service) Reputation(ctx context.Context, agentID string) (int64, error) {
	if s.deps.Trust == nil {
		return 0, nil
	}
	b, err := s.deps.Trust.Board(ctx, trust.BoardQuery{Agents: []string{agentID}})
	if err != nil {
		return 0, err
	}
	return b.Reputation(agentID), nil
}

// ResetReputation resets agent id's reputation to 0 (the moderate scope),
// saying why; it answers the reputation taken away.
func (s *Service) ResetReputation(ctx context.Context, c Caller, id, reason string) (int64, error) {
	ag, err := s.scoped(c, agents.ScopeModerate, "resetting a reputation")
	if err != nil {
		return 0, err
	}
	if s.deps.Trust == nil {
		return 0, a2a.Errorf(a2a.UnsupportedOperation, "reputations are off on this server")
	}
	return s.deps.Trust.Reset(ctx, trust.Reset{AgentID: id, Reason: reason,
		Actor: moderation.Actor{Kind: moderation.ActorAgent, ID: ag.ID, Name: ag.Name}})
}
