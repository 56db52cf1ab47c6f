package service

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/tasks"
)

// OperatorDeps are the domain services the operator reaches.
type OperatorDeps struct {
	Agents      *agents.Service
	Tasks       *tasks.Service
	Discussions *discussions.Service
	Records     *knowledge.Service
	// Moderation is the review queue, hiding and the moderation log
	// (operator_moderation.go).
	Moderation *moderation.Service
	// Outbox and Signer are the push outbox and the signing keys
	// (operator_push.go); without them those operations answer
	// Unavailable.
	Outbox push.OutboxStore
	Signer *signing.Signer
	// Peers are this server's peers (operator_peers.go); nil answers
	// Unavailable.
	Peers *peers.Service
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Operator is what the admin API asks of the domain on the operator's
// behalf: agents, every agent's tasks and inboxes, discussions, replies
// posted as an agent, the records, the push outbox and the signing keys. It applies the rules the agents'
// own surfaces do (a reply as an agent is that agent's reply, checked by
// the same function), and names what it did not find. It is safe for
// concurrent use; kfa serve and the CLI without a server build one each.
type Operator struct{ d OperatorDeps }

// NewOperator returns the operator over d.
func NewOperator(d OperatorDeps) *Operator { return &Operator{d: d} }

// agentNotFound names the agent the operator asked for.
func agentNotFound(id string, err error) error {
	if errors.Is(err, agents.ErrNotFound) {
		return a2a.Errorf(a2a.NotFound, "agent %s not found", truncate(id, 64)).With("agentId", truncate(id, 64))
	}
	return err
}

// Agent returns one agent.
func (o *Operator) Agent(ctx context.Context, id string) (agents.Agent, error) {
	a, err := o.d.Agents.Get(ctx, id)
	return a, agentNotFound(id, err)
}

// Agents lists agents, oldest first.
func (o *Operator) Agents(ctx context.Context, pageSize *int, pageToken string) (agents.Page, error) {
	return o.d.Agents.List(ctx, pageSize, pageToken)
}

// CreateAgent makes the agent req describes, and its first token.
func (o *Operator) CreateAgent(ctx context.Context, req api.CreateAgentRequest) (agents.Created, error) {
	scopes := make([]agents.Scope, len(req.Scopes))
	for i, s := range req.Scopes {
		scopes[i] = agents.Scope(s)
	}
	return o.d.Agents.CreateAgent(ctx, agents.NewAgent{Name: req.Name, Scopes: scopes, AllowDuplicateName: req.AllowDuplicateName})
}

// RotateAgent issues a new token for the agent; the old ones keep working
// for req.GraceSeconds.
func (o *Operator) RotateAgent(ctx context.Context, id string, req api.RotateAgentRequest) (agents.Created, error) {
	if req.GraceSeconds < 0 {
		return agents.Created{}, a2a.BadParam("graceSeconds", "must not be negative")
	}
	return o.d.Agents.Rotate(ctx, id, time.Duration(req.GraceSeconds)*time.Second)
}

// RevokeAgent disables the agent and deletes its tokens.
func (o *Operator) RevokeAgent(ctx context.Context, id string) (agents.Agent, error) {
	return o.d.Agents.Revoke(ctx, id)
}

// LinkAgent makes the OAuth identity (issuer, subject) act as the agent:
// from then on that pair's access tokens are the agent's. With
// req.Replace, an identity whose agent was revoked moves to this one (the
// way back for a revoked person or client); the outcome names the agent
// it moved from.
func (o *Operator) LinkAgent(ctx context.Context, id string, req api.LinkAgentRequest) (agents.LinkOutcome, error) {
	return o.d.Agents.LinkAs(ctx, agents.Link{AgentID: id, Identity: agents.Identity{Issuer: req.Issuer, Subject: req.Subject},
		Replace: req.Replace, By: req.By})
}

// TasksQuery lists every agent's tasks, as the operator wrote it.
type TasksQuery struct {
	Owner     string // an agent id; "" for every owner
	State     string // a TASK_STATE_* name
	ContextID string
	Since     string // inclusive, ISO 8601
	PageSize  *int
	PageToken string
}

// TaskPage is one page of tasks with their owners' names.
type TaskPage struct {
	tasks.ListResult
	// OwnerNames maps each owner id of the page to its name ("" for an
	// owner no agent has: kfa check reports it).
	OwnerNames map[string]string
}

// Tasks lists the tasks of every owner (or of q.Owner), newest status
// timestamp first.
func (o *Operator) Tasks(ctx context.Context, q TasksQuery) (TaskPage, error) {
	p, err := taskFilter{ContextID: q.ContextID, State: q.State, Since: q.Since, PageSize: q.PageSize, PageToken: q.PageToken,
		stateField: "state", sinceField: "since"}.params()
	if err != nil {
		return TaskPage{}, err
	}
	if q.Owner != "" { // a mistyped id would list nothing, silently
		if _, err := o.Agent(ctx, q.Owner); err != nil {
			return TaskPage{}, err
		}
	}
	res, err := o.d.Tasks.List(ctx, q.Owner, p)
	if err != nil {
		return TaskPage{}, err
	}
	page := TaskPage{ListResult: res, OwnerNames: map[string]string{}}
	for _, t := range res.Tasks {
		if _, ok := page.OwnerNames[t.OwnerID]; !ok {
			page.OwnerNames[t.OwnerID] = o.ownerName(ctx, t.OwnerID)
		}
	}
	return page, nil
}

// ownerName is the name of an owner, "" when no agent has its id.
func (o *Operator) ownerName(ctx context.Context, id string) string {
	a, err := o.d.Agents.Get(ctx, id)
	if err != nil {
		return ""
	}
	return a.Name
}

// TaskDetail is one task with its owner's name, its discussion and the
// first page of the discussion's replies.
type TaskDetail struct {
	Task       tasks.Task
	OwnerName  string
	Discussion *discussions.Discussion // nil when the discussion is gone
	Replies    discussions.Replies
}

// Task returns one task of any owner with its discussion.
func (o *Operator) Task(ctx context.Context, id string) (TaskDetail, error) {
	t, err := o.d.Tasks.Get(ctx, "", id)
	if err != nil {
		return TaskDetail{}, namedTaskError(id, err)
	}
	out := TaskDetail{Task: t, OwnerName: o.ownerName(ctx, t.OwnerID)}
	d, replies, err := o.d.Discussions.Review(ctx, t.DiscussionID, nil, "")
	switch {
	case err == nil:
		out.Discussion, out.Replies = &d, replies
	case !errors.Is(err, discussions.ErrNotFound):
		return TaskDetail{}, err
	}
	return out, nil
}

// TaskChange is a task an operator changed, and whether it changed.
type TaskChange struct {
	Task      tasks.Task
	OwnerName string
	Changed   bool
}

// CancelTask cancels any agent's task with the owner's rules: idempotent
// on a canceled task, refused on a completed one.
func (o *Operator) CancelTask(ctx context.Context, id string) (TaskChange, error) {
	t, changed, err := o.d.Tasks.Cancel(ctx, "", id)
	if err != nil {
		return TaskChange{}, namedTaskError(id, err)
	}
	return TaskChange{Task: t, OwnerName: o.ownerName(ctx, t.OwnerID), Changed: changed}, nil
}

// ListDiscussions lists every discussion, newest first.
func (o *Operator) ListDiscussions(ctx context.Context, q DiscussionsQuery) (discussions.ListResult, error) {
	return listDiscussions(ctx, o.d.Discussions, q)
}

// GetDiscussion returns one discussion with one page of its replies.
func (o *Operator) GetDiscussion(ctx context.Context, id string, q RepliesQuery) (discussions.Discussion, discussions.Replies, error) {
	return o.d.Discussions.Review(ctx, id, q.PageSize, q.PageToken)
}

// ReplyAs posts a reply on behalf of the agent req names, with that
// agent's rules (active, ReplyScope, the body's limits, the reply rate):
// the same path as the agent's own reply, so it completes the waiting
// tasks in the transaction that stores it.
func (o *Operator) ReplyAs(ctx context.Context, discussionID string, req api.OperatorReplyRequest) (discussions.ReplyResult, error) {
	if req.AgentID == "" {
		return discussions.ReplyResult{}, a2a.BadParam("agentId", "is required: the agent the reply is posted as")
	}
	if req.Body == nil {
		return discussions.ReplyResult{}, a2a.BadParam("body", "is required")
	}
	a, err := o.Agent(ctx, req.AgentID)
	if err != nil {
		return discussions.ReplyResult{}, err
	}
	return reply(ctx, o.d.Discussions, a, discussionID, req.Body)
}

// Inbox lists an agent's inbox, oldest first.
func (o *Operator) Inbox(ctx context.Context, agentID string, q InboxQuery) (discussions.InboxResult, error) {
	if _, err := o.Agent(ctx, agentID); err != nil {
		return discussions.InboxResult{}, err
	}
	return o.d.Discussions.Inbox(ctx, agentID, q.UnackedOnly, q.PageSize, q.PageToken)
}

// ListRecords lists records in id order after the id after, without
// their bodies' use (the caller shows what it needs).
func (o *Operator) ListRecords(ctx context.Context, after string, pageSize *int) (knowledge.RecordPage, error) {
	return o.d.Records.List(ctx, after, pageSize)
}

// Record returns one record.
func (o *Operator) Record(ctx context.Context, id string) (knowledge.Record, error) {
	return o.d.Records.Get(ctx, id)
}

// ImportRecords streams JSON Lines from r into the records.
func (o *Operator) ImportRecords(ctx context.Context, r io.Reader, opts knowledge.ImportOptions) (knowledge.ImportSummary, error) {
	return o.d.Records.Import(ctx, r, opts)
}

// DeleteRecord deletes one record.
func (o *Operator) DeleteRecord(ctx context.Context, id string) error {
	return o.d.Records.Delete(ctx, id)
}

// DeleteRecords deletes a batch of records in one transaction.
func (o *Operator) DeleteRecords(ctx context.Context, ids []string) (knowledge.DeleteResult, error) {
	return o.d.Records.DeleteMany(ctx, ids)
}

// ExportRecords writes the records opts selects to w as import lines.
func (o *Operator) ExportRecords(ctx context.Context, w io.Writer, opts knowledge.ExportOptions) (int, error) {
	return o.d.Records.Export(ctx, w, opts)
}
