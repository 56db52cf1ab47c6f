package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/ratelimit"
)

// Moderation on every surface (the API, the web view): who may flag,
// accept and moderate is checked here, once; what a flag or a hide does
// is moderation's and discussions' decision.

// FlagInput is an agent's flag: on discussion DiscussionID, or on its
// reply ReplyID when that is set.
type FlagInput struct {
	DiscussionID string
	ReplyID      string
	// Reason is required (nil: the field was absent).
	Reason *string
	Note   string
}

// Flag records the caller's flag (the post scope) and notes what is left
// of its flag rate for the RateLimit headers.
func (s *Service) Flag(ctx context.Context, c Caller, in FlagInput) (moderation.FlagResult, error) {
	ag, err := s.scoped(c, agents.ScopePost, "flagging")
	if err != nil {
		return moderation.FlagResult{}, err
	}
	if in.Reason == nil {
		return moderation.FlagResult{}, a2a.BadParam("reason", "is required: spam, wrong, unsafe, off-topic or other")
	}
	if s.deps.Moderation == nil {
		return moderation.FlagResult{}, a2a.Errorf(a2a.UnsupportedOperation, "moderation is off on this server")
	}
	t := moderation.Target{Kind: moderation.KindDiscussion, ID: in.DiscussionID}
	if in.ReplyID != "" {
		t = moderation.Target{Kind: moderation.KindReply, ID: in.ReplyID, DiscussionID: in.DiscussionID}
	}
	res, err := s.deps.Moderation.Flag(ctx, moderation.Agent{ID: ag.ID, Name: ag.Name}, t, *in.Reason, in.Note)
	if q, limited, qerr := s.deps.Moderation.FlagQuota(ctx, ag.ID); qerr == nil && limited {
		ratelimit.Note(ctx, q)
	}
	return res, err
}

// Accept marks reply replyID as the answer the caller, the asker of
// discussionID, accepts.
func (s *Service) Accept(ctx context.Context, c Caller, discussionID, replyID string) (discussions.AcceptResult, error) {
	ag, err := s.scoped(c, agents.ScopePost, "accepting an answer")
	if err != nil {
		return discussions.AcceptResult{}, err
	}
	return s.deps.Discussions.Accept(ctx, ag.ID, discussionID, replyID)
}

// ModerateInput is a moderator's action on an item.
type ModerateInput struct {
	Action moderation.Action
	Target moderation.Target
	Reason string
}

// Moderate runs a moderator's action (the moderate scope) as the caller.
func (s *Service) Moderate(ctx context.Context, c Caller, in ModerateInput) (moderation.Result, error) {
	ag, err := s.scoped(c, agents.ScopeModerate, "moderating")
	if err != nil {
		return moderation.Result{}, err
	}
	if s.deps.Moderation == nil {
		return moderation.Result{}, a2a.Errorf(a2a.UnsupportedOperation, "moderation is off on this server")
	}
	actor := moderation.Actor{Kind: moderation.ActorAgent, ID: ag.ID, Name: ag.Name}
	switch in.Action {
	case moderation.ActionHide:
		return s.deps.Moderation.Hide(ctx, actor, in.Target, in.Reason)
	case moderation.ActionUnhide:
		return s.deps.Moderation.Unhide(ctx, actor, in.Target, in.Reason)
	case moderation.ActionDismiss:
		return s.deps.Moderation.Dismiss(ctx, actor, in.Target, in.Reason)
	}
	return moderation.Result{}, a2a.BadParam("action", "must be hide, unhide or dismiss")
}

// ModerationQueue is the review queue (the moderate scope), most flagged
// first, and how many items wait.
func (s *Service) ModerationQueue(ctx context.Context, c Caller, limit *int) ([]moderation.QueueEntry, int, error) {
	if _, err := s.scoped(c, agents.ScopeModerate, "the moderation queue"); err != nil {
		return nil, 0, err
	}
	if s.deps.Moderation == nil {
		return nil, 0, a2a.Errorf(a2a.UnsupportedOperation, "moderation is off on this server")
	}
	return s.deps.Moderation.Queue(ctx, limit)
}

// ReviewDiscussion is a discussion as a moderator sees it (the moderate
// scope): hidden or not, with its hidden replies.
func (s *Service) ReviewDiscussion(ctx context.Context, c Caller, id string, pageSize *int, pageToken string) (discussions.Discussion, discussions.Replies, error) {
	if _, err := s.scoped(c, agents.ScopeModerate, "reviewing hidden content"); err != nil {
		return discussions.Discussion{}, discussions.Replies{}, err
	}
	return s.deps.Discussions.Review(ctx, id, pageSize, pageToken)
}

// scoped returns the caller's agent when it holds scope, or the error
// that says what is missing (what names the action).
func (s *Service) scoped(c Caller, scope agents.Scope, what string) (*agents.Agent, error) {
	ag, err := requireAgent(c, what)
	if err != nil {
		return nil, err
	}
	if err := ag.Permit(scope, what); err != nil {
		return nil, err
	}
	return ag, nil
}

// CanModerate reports whether c may moderate (the moderate scope), for a
// surface that offers the moderator's forms only to those.
func CanModerate(c Caller) bool {
	return c.Agent != nil && c.Agent.Permit(agents.ScopeModerate, "moderating") == nil
}
