package tasks

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/pagetoken"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
)

// Page sizes of ListTasks.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// Bounds on client-chosen identifiers.
const (
	MaxMessageIDLen = 128
	MaxContextIDLen = 128
)

// OpenLimitRetryAfter is the Retry-After sent when an agent is at its
// open-task limit: a task frees up only when it is answered or canceled,
// which no clock predicts, so this is a polite polling interval.
const OpenLimitRetryAfter = time.Minute

// CreateAsk is everything one ask writes, made before the transaction.
type CreateAsk struct {
	Task Task
	// Discussion is the new discussion, or the zero value when the ask
	// joins JoinDiscussionID.
	Discussion       discussions.Discussion
	JoinDiscussionID string
	// MaxOpen bounds the owner's WORKING tasks, decided in the transaction;
	// 0 means no bound.
	MaxOpen int
	// AskRate limits the owner's new asks, decided in the transaction
	// against the owner's ask window, which the same transaction moves on;
	// the zero Rate means no limit.
	AskRate ratelimit.Rate
	// Push, when set, is a push notification config of the new task,
	// stored in the same transaction (an idempotent retry stores none).
	Push *push.Config
}

// ListQuery selects one owner's tasks, newest status timestamp first, ties
// by id descending.
type ListQuery struct {
	OwnerID   string // "" lists every owner's tasks (operator use)
	ContextID string
	State     a2a.TaskState // "" for any
	Since     time.Time     // inclusive lower bound on the status timestamp; zero for none
	PageSize  int
	After     *Cursor // position after which the page starts
	// Show, when set, is what ViewSnapshots' reader shows of each task
	// (Wire.Append's view): a store may leave out of the snapshots what
	// it does not show, and PostgreSQL reads only the columns it shows.
	// nil: the whole task. ListTasks ignores it.
	Show *View
}

// SinceMillis is Since as the inclusive lower bound the stores compare
// status timestamps (Unix milliseconds) with: a bound inside a millisecond
// keeps only the timestamps at or after it, and a bound before 1970 keeps
// them all. Exact for every time (UnixNano overflows outside 1678-2262,
// which would turn a bound in the year 3000 into one that keeps
// everything); 0 when there is no bound.
func (q ListQuery) SinceMillis() int64 {
	if q.Since.IsZero() || q.Since.Unix() < 0 {
		return 0
	}
	ms := q.Since.UnixMilli()
	if q.Since.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

// Cursor is a position in the (status timestamp, id) order.
type Cursor struct {
	StatusTime time.Time
	ID         string
}

// ListPage is one page from the store.
type ListPage struct {
	Tasks []Task
	Next  *Cursor // nil on the last page
	Total int     // tasks matching the query, before paging
}

// Store persists tasks. Each method is one transaction.
type Store interface {
	// CreateAsk decides c (asknet.DecideAsk) on the state it names, loaded
	// under the owner's lock, and writes what the decision says in the
	// same transaction: the task, the new discussion, the owner's ask
	// window, the push config and the log events. A retry of the owner's
	// message id returns the first task unchanged (Created false); a
	// refusal is the decision's error and writes nothing.
	CreateAsk(ctx context.Context, c CreateAsk) (AskResult, error)
	// GetTask returns the task if ownerID owns it (any owner when ownerID
	// is ""), and ErrNotFound otherwise. The owner is checked before the
	// task is decoded: another owner's task costs what an unknown id costs,
	// so the time of an answer does not tell whether it exists.
	GetTask(ctx context.Context, ownerID, id string) (Task, error)
	// ViewSnapshot calls fn with the task as stored, its wire JSON not
	// decoded (the read that shows a task), if ownerID owns it (any owner
	// when ownerID is ""), or returns ErrNotFound, checking the owner
	// first as GetTask does. The snapshot is valid only during the call.
	ViewSnapshot(ctx context.Context, ownerID, id string, fn func(*Snapshot) error) error
	// TaskByMessageID finds the owner's task for an ask message id.
	TaskByMessageID(ctx context.Context, ownerID, messageID string) (Task, error)
	ListTasks(ctx context.Context, q ListQuery) (ListPage, error)
	// ViewSnapshots is ListTasks with each task of the page handed to fn,
	// in order, as ViewSnapshot hands it; it returns the next page's
	// cursor (nil on the last page) and the total as ListTasks does.
	ViewSnapshots(ctx context.Context, q ListQuery, fn func(*Snapshot) error) (next *Cursor, total int, err error)
	// CancelTask decides the cancel (DecideCancel) under the task's lock
	// and writes what the decision says: the transition, its deliveries
	// and the log events. It returns the task, whole, after the cancel.
	CancelTask(ctx context.Context, ownerID, id string, at time.Time) (t Task, changed bool, err error)
	// AskUsage reads what the ask limits know of ownerID: its ask window
	// (the kept time of Limits.AskRate, zero when it never asked under a
	// rate) and its WORKING tasks, in one read.
	AskUsage(ctx context.Context, ownerID string) (AskUsage, error)
}

// AskResult is what an ask did.
type AskResult struct {
	Task Task
	// Created is false for an idempotent retry: Task is the first task of
	// its message id, unchanged.
	Created bool
	// Window is the owner's ask window after the ask: the kept time of
	// the ask rate (zero when the owner never asked under one), from which
	// the ask's quota is told without reading it again.
	Window time.Time
}

// AskUsage is what the store knows of one agent's asks.
type AskUsage struct {
	Window time.Time // the ask rate's kept time; zero for none
	Open   int       // WORKING tasks
}

// Limits are the ask limits of one server.
type Limits struct {
	// AskRate limits new asks per agent; the zero Rate means no limit. The
	// store keeps each agent's window with its tasks, so a restart does not
	// hand anyone a fresh budget.
	AskRate ratelimit.Rate
	// MaxOpen bounds each agent's WORKING tasks; 0 means no bound.
	MaxOpen int
}

// RateLimitError is a refused ask. RetryAfter says when to try again.
type RateLimitError = ratelimit.Exceeded

// Service applies the task rules over a Store.
type Service struct {
	store  Store
	limits Limits
	tokens pagetoken.Codec
	now    func() time.Time
}

// NewService returns a Service. secret keys page tokens.
func NewService(store Store, limits Limits, secret []byte, now func() time.Time) *Service {
	return &Service{store: store, limits: limits, tokens: pagetoken.New(secret), now: now}
}

// Asker is the agent that asks.
type Asker struct {
	ID   string
	Name string
}

// AskInput is one ask, already read from the wire.
type AskInput struct {
	Asker    Asker
	Message  a2a.Message // the user's message, stored as the task's history
	Question string
	Details  string
	discussions.Filters
	// JoinDiscussionID, when set, maps the new task to this existing open
	// discussion instead of opening one.
	JoinDiscussionID string
	// Push, when set, is a checked push notification config
	// (push.Service.Validate) to store with the new task.
	Push *push.Config
	// Origin, when set, is where a question forwarded here by a peer was
	// asked first (federation): the discussion it opens keeps it, and is
	// never forwarded again. NoForward opts a question out of being
	// forwarded to this server's peers.
	Origin    *discussions.Origin
	NoForward bool
}

// Ask creates a WORKING task owned by the asker and, unless it joins one,
// a public discussion, in one transaction. The same asker sending the same
// message id again gets the first task back, unchanged; such a retry, and
// an ask refused for any reason, does not use up the asker's rate budget
// (the budget is spent in the transaction that creates the task). An ask
// that is answered notes its quota in ctx (ratelimit.Note).
func (s *Service) Ask(ctx context.Context, in AskInput) (Task, bool, error) {
	if err := input.ID("message.messageId", in.Message.MessageID, MaxMessageIDLen); err != nil {
		return Task{}, false, err
	}
	if in.Message.ContextID != "" {
		if err := input.ID("message.contextId", in.Message.ContextID, MaxContextIDLen); err != nil {
			return Task{}, false, err
		}
	}
	if in.JoinDiscussionID == "" {
		if err := discussions.ValidateQuestion(in.Question, in.Details, in.Filters); err != nil {
			return Task{}, false, err
		}
	} else if err := input.ID("discussionId", in.JoinDiscussionID, 64); err != nil {
		return Task{}, false, err
	}

	c := NewAsk(in, s.now(), s.limits.MaxOpen)
	c.AskRate = s.limits.AskRate
	res, err := s.store.CreateAsk(ctx, c)
	var limited *ratelimit.Exceeded
	if errors.As(err, &limited) {
		return Task{}, false, limited // the decision's words, unwrapped: they are the client's
	}
	if err != nil {
		return Task{}, false, fmt.Errorf("ask: %w", err)
	}
	// The quota the ask counted against, for the RateLimit headers: the
	// decision's window, so no read after the write.
	if q, ok := s.limits.AskRate.Quota(QuotaAsk, res.Window, s.now()); ok {
		ratelimit.Note(ctx, q)
	}
	return res.Task, res.Created, nil
}

// NewAsk builds what one ask writes at time now: the WORKING task with the
// message as its history, and the new discussion unless the ask joins one.
// Service.Ask uses it after its checks; the benchmark's bulk loader uses it
// so that loaded tasks are built exactly as asked ones.
func NewAsk(in AskInput, now time.Time, maxOpen int) CreateAsk {
	now = now.UTC().Truncate(time.Millisecond)
	taskID := ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String()
	contextID := in.Message.ContextID
	if contextID == "" {
		contextID = ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String()
	}
	msg := in.Message
	msg.ContextID = contextID
	msg.TaskID = taskID
	c := CreateAsk{
		Task: Task{
			ID:         taskID,
			ContextID:  contextID,
			OwnerID:    in.Asker.ID,
			MessageID:  in.Message.MessageID,
			State:      a2a.TaskStateWorking,
			StatusTime: now,
			CreatedAt:  now,
			History:    []a2a.Message{msg},
		},
		JoinDiscussionID: in.JoinDiscussionID,
		MaxOpen:          maxOpen,
	}
	if in.Push != nil {
		p := *in.Push
		p.TaskID, p.OwnerID, p.CreatedAt = taskID, in.Asker.ID, now
		c.Push = &p
	}
	if in.JoinDiscussionID != "" {
		c.Task.DiscussionID = in.JoinDiscussionID
	} else {
		c.Discussion = discussions.Discussion{
			ID:         ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String(),
			Title:      in.Question,
			Body:       in.Details,
			AuthorID:   in.Asker.ID,
			AuthorName: in.Asker.Name,
			Filters:    in.Filters,
			Status:     discussions.StatusOpen,
			CreatedAt:  now,
			Origin:     in.Origin,
			NoForward:  in.NoForward || in.Origin != nil,
		}
		c.Task.DiscussionID = c.Discussion.ID
	}
	return c
}

// Get returns the task if ownerID owns it (any owner when ownerID is ""),
// and ErrNotFound otherwise, the same for another owner's task as for a
// missing one, in what it answers and in what it costs.
func (s *Service) Get(ctx context.Context, ownerID, id string) (Task, error) {
	return s.store.GetTask(ctx, ownerID, id)
}

// ViewTask is Get for showing the task: fn gets its stored wire JSON,
// which is never decoded on the way out, valid only during the call.
func (s *Service) ViewTask(ctx context.Context, ownerID, id string, fn func(*Snapshot) error) error {
	return s.store.ViewSnapshot(ctx, ownerID, id, fn)
}

// Cancel cancels the task for its owner (any owner when ownerID is "", the
// operator). It is idempotent on a canceled task; a completed task is
// ErrNotCancelable. The discussion and its replies stay.
func (s *Service) Cancel(ctx context.Context, ownerID, id string) (Task, bool, error) {
	return s.store.CancelTask(ctx, ownerID, id, s.now().UTC().Truncate(time.Millisecond))
}

// ListParams are the ListTasks filters as read from the wire.
type ListParams struct {
	ContextID string
	State     a2a.TaskState
	Since     time.Time
	PageSize  *int // nil for DefaultPageSize
	PageToken string
}

// ListResult is one page with its opaque next-page token.
type ListResult struct {
	Tasks         []Task
	NextPageToken string
	PageSize      int
	TotalSize     int
}

// List returns ownerID's tasks matching p (every owner's when ownerID is "").
func (s *Service) List(ctx context.Context, ownerID string, p ListParams) (ListResult, error) {
	q, binding, err := s.listQuery(ownerID, p)
	if err != nil {
		return ListResult{}, err
	}
	page, err := s.store.ListTasks(ctx, q)
	if err != nil {
		return ListResult{}, fmt.Errorf("list tasks: %w", err)
	}
	res := ListResult{Tasks: page.Tasks, PageSize: q.PageSize, TotalSize: page.Total}
	if res.NextPageToken, err = s.nextToken(binding, page.Next); err != nil {
		return ListResult{}, err
	}
	return res, nil
}

// ListInfo is what a page of ViewList says besides its tasks.
type ListInfo struct {
	NextPageToken string
	PageSize      int
	TotalSize     int
}

// ViewList is List for showing the tasks under view: fn gets each task
// of the page, in order, as ViewTask gives it, holding what view shows
// (the rest may be left out). Page tokens are the same as List's.
func (s *Service) ViewList(ctx context.Context, ownerID string, p ListParams, view View, fn func(*Snapshot) error) (ListInfo, error) {
	q, binding, err := s.listQuery(ownerID, p)
	if err != nil {
		return ListInfo{}, err
	}
	q.Show = &view
	next, total, err := s.store.ViewSnapshots(ctx, q, fn)
	if err != nil {
		return ListInfo{}, fmt.Errorf("list tasks: %w", err)
	}
	info := ListInfo{PageSize: q.PageSize, TotalSize: total}
	if info.NextPageToken, err = s.nextToken(binding, next); err != nil {
		return ListInfo{}, err
	}
	return info, nil
}

// listQuery checks p and turns it into a store query, with the binding
// that ties page tokens to the query they page.
func (s *Service) listQuery(ownerID string, p ListParams) (ListQuery, string, error) {
	size, err := input.PageSize(p.PageSize, DefaultPageSize, MaxPageSize)
	if err != nil {
		return ListQuery{}, "", err
	}
	binding := fmt.Sprintf("tasks|%s|%q|%s|%d", ownerID, p.ContextID, p.State, p.Since.UnixNano())
	q := ListQuery{OwnerID: ownerID, ContextID: p.ContextID, State: p.State, Since: p.Since, PageSize: size}
	if p.PageToken != "" {
		raw, err := s.tokens.Decode(binding, p.PageToken)
		if err != nil || len(raw) != 8+16 {
			return ListQuery{}, "", pagetoken.ErrInvalid
		}
		var id ulid.ULID
		copy(id[:], raw[8:])
		q.After = &Cursor{StatusTime: time.UnixMilli(int64(binary.BigEndian.Uint64(raw[:8]))).UTC(), ID: id.String()}
	}
	return q, binding, nil
}

// nextToken is the page token of the page after next ("" for none).
func (s *Service) nextToken(binding string, next *Cursor) (string, error) {
	if next == nil {
		return "", nil
	}
	id, err := ulid.ParseStrict(next.ID)
	if err != nil {
		return "", fmt.Errorf("list tasks: bad cursor id %q: %w", next.ID, err)
	}
	raw := binary.BigEndian.AppendUint64(make([]byte, 0, 24), uint64(next.StatusTime.UnixMilli()))
	return s.tokens.Encode(binding, append(raw, id[:]...)), nil
}
