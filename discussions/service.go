package discussions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/pagetoken"
	"github.com/kfa-project/kfa/ratelimit"
)

// Page sizes of the list operations.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	MaxAckIDs       = 100
	// DefaultReplyPageSize is the replies a discussion is shown with when
	// the reader names no page size.
	DefaultReplyPageSize = 50
)

// ListQuery selects discussions, newest first (oldest first with
// Oldest: the open questions that have waited longest).
type ListQuery struct {
	Status   Status // "" for all
	PageSize int
	After    string // cursor: the id of the last discussion of the previous page
	Oldest   bool
}

// Page is one page of discussions.
type Page struct {
	Discussions []Discussion
	Next        string // cursor for the next page; "" on the last one
	Total       int    // discussions matching the filter
}

// ReplyQuery selects one page of a discussion's replies, oldest first.
type ReplyQuery struct {
	DiscussionID string
	PageSize     int
	After        string // cursor: the id of the last reply of the previous page
	// IncludeHidden lists hidden replies too (for moderators and the
	// operator); readers never see them.
	IncludeHidden bool
}

// ReplyPage is one page of replies.
type ReplyPage struct {
	Replies []Reply
	Next    string // cursor for the next page; "" on the last one
}

// Limits are the reply limits of one server. The zero value limits
// nothing.
type Limits struct {
	// ReplyRate limits each agent's replies; the store keeps each agent's
	// window and applies it in the reply's transaction, so every caller of
	// Reply (the API, the operator, a web page) is limited alike and a
	// restart forgets nothing.
	ReplyRate ratelimit.Rate
	// MaxReplies bounds the replies one discussion holds; 0 means no bound.
	MaxReplies int
}

// InboxQuery selects one agent's inbox entries, oldest first.
type InboxQuery struct {
	AgentID     string
	UnackedOnly bool
	PageSize    int
	After       string // cursor: the id of the last entry of the previous page
}

// InboxPage is one page of inbox entries.
type InboxPage struct {
	Entries []InboxEntry
	Next    string
}

// ReplyResult is a stored reply and what it did.
type ReplyResult struct {
	Reply Reply
	// Qualifying reports whether the reply was by someone other than the
	// discussion's author.
	Qualifying bool
	// CompletedTaskIDs are the tasks the reply completed, in id order.
	CompletedTaskIDs []string
	// Notified is the number of inbox entries written.
	Notified int
}

// AckResult says which ids an ack changed.
type AckResult struct {
	Acked        []string // newly acknowledged
	AlreadyAcked []string
	NotFound     []string // unknown, or another agent's
}

// Store persists discussions, replies and inboxes. AddReply is one
// transaction that also completes tasks (see the package comment).
type Store interface {
	// GetDiscussion returns the discussion, hidden or not (ErrNotFound
	// for none).
	GetDiscussion(ctx context.Context, id string) (Discussion, error)
	// GetReply returns reply replyID of discussion discussionID, hidden or
	// not (ErrReplyNotFound for none).
	GetReply(ctx context.Context, discussionID, replyID string) (Reply, error)
	// ListReplies returns one page of a discussion's replies, oldest first
	// (ErrNotFound for a malformed discussion id; an empty page for one
	// without replies), without the hidden ones unless q asks for them.
	ListReplies(ctx context.Context, q ReplyQuery) (ReplyPage, error)
	// GetThread is GetDiscussion and ListReplies of q together, as one
	// read (one snapshot, one round trip on PostgreSQL): what a
	// discussion's page and the search index's reader need.
	GetThread(ctx context.Context, q ReplyQuery) (Discussion, ReplyPage, error)
	// ListDiscussions lists the discussions readers see: hidden ones are
	// neither listed nor counted.
	ListDiscussions(ctx context.Context, q ListQuery) (Page, error)
	// AcceptReply decides c (DecideAccept) on the discussion, loaded
	// under its lock, and its reply, and writes the new mark with its
	// event. A refusal writes nothing.
	AcceptReply(ctx context.Context, c Accept) (AcceptOutcome, error)
	// AddReply decides r under lim (asknet.DecideReply) on the state it
	// names, loaded under the author's lock, then the discussion's, then
	// its WORKING tasks', and writes what the decision says in the same
	// transaction (see ReplyResult). A refusal is the decision's error
	// (*NotFoundError, *TooManyRepliesError, *ratelimit.Exceeded) and
	// writes nothing.
	AddReply(ctx context.Context, r Reply, lim Limits) (ReplyResult, error)
	// ReplyWindow reads agentID's reply window: the kept time of
	// Limits.ReplyRate, zero when it never replied under a rate.
	ReplyWindow(ctx context.Context, agentID string) (time.Time, error)
	ListInbox(ctx context.Context, q InboxQuery) (InboxPage, error)
	// AckInbox decides the ack (DecideAck) on agentID's entries among ids
	// and writes the entries it acknowledges.
	AckInbox(ctx context.Context, agentID string, ids []string, at time.Time) (AckResult, error)
}

// Service applies the discussion rules over a Store.
type Service struct {
	store  Store
	limits Limits
	tokens pagetoken.Codec
	now    func() time.Time
}

// NewService returns a Service with limits. secret keys page tokens.
func NewService(store Store, limits Limits, secret []byte, now func() time.Time) *Service {
	return &Service{store: store, limits: limits, tokens: pagetoken.New(secret), now: now}
}

// ListResult is a page with its opaque next-page token.
type ListResult struct {
	Discussions   []Discussion
	NextPageToken string
	TotalSize     int
}

// List returns public discussions, newest first, pageSize of them
// (DefaultPageSize when nil).
func (s *Service) List(ctx context.Context, status Status, asked *int, pageToken string) (ListResult, error) {
	return s.list(ctx, status, false, asked, pageToken)
}

// ListOldest is List oldest first: the open questions that have waited
// longest come first.
func (s *Service) ListOldest(ctx context.Context, status Status, asked *int, pageToken string) (ListResult, error) {
	return s.list(ctx, status, true, asked, pageToken)
}

func (s *Service) list(ctx context.Context, status Status, oldest bool, asked *int, pageToken string) (ListResult, error) {
	pageSize, err := input.PageSize(asked, DefaultPageSize, MaxPageSize)
	if err != nil {
		return ListResult{}, err
	}
	binding := "discussions|" + string(status)
	if oldest {
		binding += "|oldest" // a newest-first token continues no oldest-first list
	}
	q := ListQuery{Status: status, PageSize: pageSize, Oldest: oldest}
	if pageToken != "" {
		cur, err := s.tokens.Decode(binding, pageToken)
		if err != nil {
			return ListResult{}, err
		}
		q.After = string(cur)
	}
	p, err := s.store.ListDiscussions(ctx, q)
	if err != nil {
		return ListResult{}, fmt.Errorf("list discussions: %w", err)
	}
	res := ListResult{Discussions: p.Discussions, TotalSize: p.Total}
	if p.Next != "" {
		res.NextPageToken = s.tokens.Encode(binding, []byte(p.Next))
	}
	return res, nil
}

// Replies is one page of a discussion's replies with its next-page token.
type Replies struct {
	Replies       []Reply
	NextPageToken string
}

// Get returns one discussion and one page of its replies, oldest first
// (DefaultReplyPageSize of them when pageSize is nil), as readers see
// it: a hidden discussion is a *NotFoundError (with Hidden set), and
// hidden replies are left out.
func (s *Service) Get(ctx context.Context, id string, asked *int, pageToken string) (Discussion, Replies, error) {
	return s.get(ctx, id, asked, pageToken, false)
}

// Review is Get for moderators and the operator: a hidden discussion is
// returned, and its hidden replies are listed with the others.
func (s *Service) Review(ctx context.Context, id string, asked *int, pageToken string) (Discussion, Replies, error) {
	return s.get(ctx, id, asked, pageToken, true)
}

func (s *Service) get(ctx context.Context, id string, asked *int, pageToken string, review bool) (Discussion, Replies, error) {
	pageSize, err := input.PageSize(asked, DefaultReplyPageSize, MaxPageSize)
	if err != nil {
		return Discussion{}, Replies{}, err
	}
	binding := "replies|" + id
	if review {
		binding = "replies-all|" + id // a reader's token skips hidden replies: the pages differ
	}
	q := ReplyQuery{DiscussionID: id, PageSize: pageSize, IncludeHidden: review}
	if pageToken != "" {
		cur, err := s.tokens.Decode(binding, pageToken)
		if err != nil {
			return Discussion{}, Replies{}, err
		}
		q.After = string(cur)
	}
	d, p, err := s.store.GetThread(ctx, q)
	if err != nil {
		return Discussion{}, Replies{}, fmt.Errorf("get discussion %s: %w", id, named(id, err))
	}
	if d.Hidden && !review {
		return Discussion{}, Replies{}, &NotFoundError{ID: id, Hidden: true}
	}
	res := Replies{Replies: p.Replies}
	if p.Next != "" {
		res.NextPageToken = s.tokens.Encode(binding, []byte(p.Next))
	}
	return d, res, nil
}

// named turns the store's ErrNotFound into a NotFoundError naming id.
func named(id string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return &NotFoundError{ID: id}
	}
	return err
}

// ValidateReplyBody checks a reply's text: 1 to MaxReplyLen characters
// of valid text, new lines allowed.
func ValidateReplyBody(body string) error { return input.Text("body", body, 1, MaxReplyLen, true) }

// Author is who posts a reply.
type Author struct {
	ID   string
	Name string
}

// Reply stores a reply by author on a discussion. When it qualifies, the
// same transaction completes the waiting tasks (see the package comment).
// A reply over the author's reply rate is a *ratelimit.Exceeded, one on
// a discussion at its reply bound ErrTooManyReplies; neither writes
// anything or spends any budget.
func (s *Service) Reply(ctx context.Context, author Author, discussionID, body string) (ReplyResult, error) {
	if err := ValidateReplyBody(body); err != nil {
		return ReplyResult{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	r := Reply{
		ID:           ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String(),
		DiscussionID: discussionID,
		AuthorID:     author.ID,
		AuthorName:   author.Name,
		Body:         body,
		CreatedAt:    now,
	}
	res, err := s.store.AddReply(ctx, r, s.limits)
	var limited *ratelimit.Exceeded
	if errors.As(err, &limited) {
		return ReplyResult{}, limited // the decision's words, unwrapped: they are the client's
	}
	if err != nil {
		return ReplyResult{}, fmt.Errorf("reply on %s: %w", discussionID, named(discussionID, err))
	}
	return res, nil
}

// InboxResult is a page of inbox entries with its next-page token.
type InboxResult struct {
	Entries       []InboxEntry
	NextPageToken string
}

// Inbox lists an agent's inbox, oldest first (DefaultPageSize entries
// when pageSize is nil).
func (s *Service) Inbox(ctx context.Context, agentID string, unackedOnly bool, asked *int, pageToken string) (InboxResult, error) {
	pageSize, err := input.PageSize(asked, DefaultPageSize, MaxPageSize)
	if err != nil {
		return InboxResult{}, err
	}
	binding := fmt.Sprintf("inbox|%s|%t", agentID, unackedOnly)
	q := InboxQuery{AgentID: agentID, UnackedOnly: unackedOnly, PageSize: pageSize}
	if pageToken != "" {
		cur, err := s.tokens.Decode(binding, pageToken)
		if err != nil {
			return InboxResult{}, err
		}
		q.After = string(cur)
	}
	p, err := s.store.ListInbox(ctx, q)
	if err != nil {
		return InboxResult{}, fmt.Errorf("list inbox: %w", err)
	}
	res := InboxResult{Entries: p.Entries}
	if p.Next != "" {
		res.NextPageToken = s.tokens.Encode(binding, []byte(p.Next))
	}
	return res, nil
}

// Ack acknowledges inbox entries of agentID. It is idempotent and changes
// no task.
func (s *Service) Ack(ctx context.Context, agentID string, ids []string) (AckResult, error) {
	if len(ids) == 0 {
		return AckResult{}, input.Errorf("ids", "must list at least one entry id")
	}
	if len(ids) > MaxAckIDs {
		return AckResult{}, input.Errorf("ids", "%d ids, at most %d per call", len(ids), MaxAckIDs)
	}
	for i, id := range ids {
		if err := input.Text(fmt.Sprintf("ids[%d]", i), id, 1, 64, false); err != nil {
			return AckResult{}, err
		}
	}
	res, err := s.store.AckInbox(ctx, agentID, ids, s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return AckResult{}, fmt.Errorf("ack inbox: %w", err)
	}
	return res, nil
}

// AcceptResult is the discussion after an accept, and whether the accept
// changed it.
type AcceptResult struct {
	Discussion Discussion
	Changed    bool
}

// Accept marks reply replyID as the answer agent callerID, the asker of
// discussionID, accepts (see DecideAccept for the refusals). Accepting
// another reply moves the mark; accepting the accepted one again changes
// nothing.
func (s *Service) Accept(ctx context.Context, callerID, discussionID, replyID string) (AcceptResult, error) {
	at := s.now().UTC().Truncate(time.Millisecond)
	out, err := s.store.AcceptReply(ctx, Accept{DiscussionID: discussionID, ReplyID: replyID, CallerID: callerID, At: at})
	var rnf *ReplyNotFoundError
	switch {
	case errors.As(err, &rnf):
		return AcceptResult{}, rnf
	case errors.Is(err, ErrNotAsker), errors.Is(err, ErrAcceptOwn):
		return AcceptResult{}, err
	case err != nil:
		return AcceptResult{}, fmt.Errorf("accept reply %s on %s: %w", replyID, discussionID, named(discussionID, err))
	}
	return AcceptResult{Discussion: out.Discussion, Changed: out.Changed}, nil
}
