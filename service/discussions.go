package service

import (
	"context"
	"errors"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

// What the surfaces ask of discussions and inboxes: /api/v1, the web
// view, MCP, and (as the operator, operator.go) the admin API. Each
// request is checked here or in package discussions, once, so every
// surface answers it the same way.

// DiscussionsQuery lists discussions, as a client wrote it.
type DiscussionsQuery struct {
	Status    string // open, answered, or "" for both
	PageSize  *int   // nil for the default
	PageToken string
	// Oldest lists oldest first: the questions that have waited longest.
	Oldest bool
}

// RepliesQuery is the page of replies a discussion is shown with.
type RepliesQuery struct {
	PageSize  *int // nil for the default
	PageToken string
}

// InboxQuery lists an inbox, as a client wrote it.
type InboxQuery struct {
	UnackedOnly bool
	PageSize    *int // nil for the default
	PageToken   string
}

// ReplyScope is the scope replying needs.
const ReplyScope = agents.ScopePost

// waitScan is how many of the newest waiting tasks WaitedOn reads.
const waitScan = 50

// WaitedOn returns up to limit open discussions that an agent still waits
// on (a WORKING task), newest asked or joined first, read from the newest
// waitScan WORKING tasks: an open question whose every task was canceled
// waits on nobody (the web's home page lists these).
func (s *Service) WaitedOn(ctx context.Context, limit int) ([]discussions.Discussion, error) {
	size := waitScan
	page, err := s.deps.Tasks.List(ctx, "", tasks.ListParams{State: a2a.TaskStateWorking, PageSize: &size})
	if err != nil {
		return nil, err
	}
	out := []discussions.Discussion{}
	seen := map[string]bool{}
	for _, t := range page.Tasks {
		if seen[t.DiscussionID] {
			continue
		}
		seen[t.DiscussionID] = true
		one := 1
		d, _, err := s.deps.Discussions.Get(ctx, t.DiscussionID, &one, "")
		if errors.Is(err, discussions.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if d.Status != discussions.StatusOpen {
			continue // answered since the page of tasks was read
		}
		if out = append(out, d); len(out) == limit {
			break
		}
	}
	return out, nil
}

// ListDiscussions lists the public discussions, newest first.
func (s *Service) ListDiscussions(ctx context.Context, q DiscussionsQuery) (discussions.ListResult, error) {
	return listDiscussions(ctx, s.deps.Discussions, q)
}

// GetDiscussion returns one discussion with one page of its replies,
// oldest first.
func (s *Service) GetDiscussion(ctx context.Context, id string, q RepliesQuery) (discussions.Discussion, discussions.Replies, error) {
	return s.deps.Discussions.Get(ctx, id, q.PageSize, q.PageToken)
}

// Reply stores the caller's reply on a discussion; a qualifying one
// completes the waiting tasks in the same transaction. The caller needs
// ReplyScope. Once the reply is tried, where the caller stands against the
// reply rate is noted for the RateLimit headers, whether the reply was
// stored or refused.
func (s *Service) Reply(ctx context.Context, c Caller, discussionID string, body *string) (discussions.ReplyResult, error) {
	ag, err := requireAgent(c, "replying")
	if err != nil {
		return discussions.ReplyResult{}, err
	}
	if err := mayReply(*ag); err != nil {
		return discussions.ReplyResult{}, err
	}
	res, err := postReply(ctx, s.deps.Discussions, *ag, discussionID, body)
	// A read after the write: failing it costs the headers only.
	if q, limited, qerr := s.deps.Discussions.ReplyQuota(ctx, ag.ID); qerr == nil && limited {
		ratelimit.Note(ctx, q)
	}
	return res, err
}

// CanReply reports whether c may reply (the check Reply makes first), for
// a surface that offers the reply only to those.
func CanReply(c Caller) bool { return c.Agent != nil && mayReply(*c.Agent) == nil }

// Inbox lists the caller's inbox, oldest first.
func (s *Service) Inbox(ctx context.Context, c Caller, q InboxQuery) (discussions.InboxResult, error) {
	ag, err := requireAgent(c, "the inbox")
	if err != nil {
		return discussions.InboxResult{}, err
	}
	return s.deps.Discussions.Inbox(ctx, ag.ID, q.UnackedOnly, q.PageSize, q.PageToken)
}

// UnreadScan bounds how many unacknowledged entries Unread counts.
const UnreadScan = 99

// Unread counts the caller's unacknowledged inbox entries, up to
// UnreadScan; more says there are more than that.
func (s *Service) Unread(ctx context.Context, c Caller) (n int, more bool, err error) {
	ag, err := requireAgent(c, "the inbox")
	if err != nil {
		return 0, false, err
	}
	res, err := s.deps.Discussions.Inbox(ctx, ag.ID, true, new(UnreadScan), "")
	if err != nil {
		return 0, false, err
	}
	return len(res.Entries), res.NextPageToken != "", nil
}

// Ack acknowledges entries of the caller's inbox. It changes no task.
func (s *Service) Ack(ctx context.Context, c Caller, ids []string) (discussions.AckResult, error) {
	ag, err := requireAgent(c, "acknowledging inbox entries")
	if err != nil {
		return discussions.AckResult{}, err
	}
	return s.deps.Discussions.Ack(ctx, ag.ID, ids)
}

// Whoami returns the caller's agent.
func (s *Service) Whoami(c Caller) (agents.Agent, error) {
	ag, err := requireAgent(c, "whoami")
	if err != nil {
		return agents.Agent{}, err
	}
	return *ag, nil
}

// SharedNames says which of names more than one agent has, so that a page
// showing them can tell those agents apart; none without Deps.Agents.
func (s *Service) SharedNames(ctx context.Context, names []string) (map[string]bool, error) {
	if s.deps.Agents == nil {
		return nil, nil
	}
	return s.deps.Agents.SharedNames(ctx, names)
}

// listDiscussions is ListDiscussions over ds, for the agent and the
// operator alike.
func listDiscussions(ctx context.Context, ds *discussions.Service, q DiscussionsQuery) (discussions.ListResult, error) {
	status, err := discussions.ParseStatusFilter(q.Status)
	if err != nil {
		return discussions.ListResult{}, err
	}
	if q.Oldest {
		return ds.ListOldest(ctx, status, q.PageSize, q.PageToken)
	}
	return ds.List(ctx, status, q.PageSize, q.PageToken)
}

// reply posts ag's reply: the one path of every reply, whichever surface
// it comes from (mayReply, then postReply).
func reply(ctx context.Context, ds *discussions.Service, ag agents.Agent, discussionID string, body *string) (discussions.ReplyResult, error) {
	if err := mayReply(ag); err != nil {
		return discussions.ReplyResult{}, err
	}
	return postReply(ctx, ds, ag, discussionID, body)
}

// mayReply is who may reply: an active agent (an operator may name a
// revoked one) that holds ReplyScope.
func mayReply(ag agents.Agent) error {
	if !ag.Active() {
		return a2a.Errorf(a2a.UnsupportedOperation,
			"agent %s (%s) is revoked; a reply cannot be posted as a revoked agent", ag.ID, ag.Name).With("agentId", ag.ID)
	}
	return ag.Permit(ReplyScope, "replying")
}

// postReply stores the reply of an agent that may reply; the body is
// required.
func postReply(ctx context.Context, ds *discussions.Service, ag agents.Agent, discussionID string, body *string) (discussions.ReplyResult, error) {
	if body == nil {
		return discussions.ReplyResult{}, a2a.BadParam("body", "is required")
	}
	return ds.Reply(ctx, discussions.Author{ID: ag.ID, Name: ag.Name}, discussionID, *body)
}
