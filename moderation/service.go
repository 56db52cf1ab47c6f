package moderation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/ratelimit"
)

// QueueEntry is one item waiting for a moderator: its state, its open
// flags (oldest first) and its content as it is (hidden or not).
type QueueEntry struct {
	Item       Item
	Flags      []Flag
	Discussion discussions.Discussion
	// Reply is the reply of a reply item, nil for a discussion.
	Reply *discussions.Reply
}

// LogQuery selects one page of the audit log, newest first.
type LogQuery struct {
	PageSize int
	// Before is the cursor: the id of the last entry of the previous page
	// ("" for the newest).
	Before string
}

// LogPage is one page of the audit log.
type LogPage struct {
	Entries []Entry
	Next    string // cursor of the next page; "" on the last
}

// Store persists flags, items and the audit log, and changes content's
// visibility, each command in one transaction with its log events.
type Store interface {
	// FlagItem decides c under p (DecideFlag) on the state it names,
	// loaded under the agent's lock, then the item's discussion's, and
	// writes the outcome. A refusal writes nothing.
	FlagItem(ctx context.Context, c FlagCommand, p Policy) (FlagResult, error)
	// Moderate finds c's target (as either kind when c.Target.Kind is
	// empty), decides c (DecideModerate) on its state, loaded under the
	// discussion's lock, and writes the outcome.
	Moderate(ctx context.Context, c Command) (Result, error)
	// Queue returns at most limit of the items waiting for review, most
	// open flags first, then the longest waiting, and how many wait.
	Queue(ctx context.Context, limit int) ([]QueueEntry, int, error)
	// ListLog returns one page of the audit log, newest first.
	ListLog(ctx context.Context, q LogQuery) (LogPage, error)
	// PostsBy returns up to limit of the discussions and replies agentID
	// wrote, after the cursor after ("" for the first), and the cursor of
	// the next page ("" on the last).
	PostsBy(ctx context.Context, agentID, after string, limit int) ([]Target, string, error)
	// FlagWindow reads agentID's flag window (zero when none).
	FlagWindow(ctx context.Context, agentID string) (time.Time, error)
}

// Service applies the moderation rules over a Store.
type Service struct {
	store  Store
	policy Policy
	now    func() time.Time
}

// NewService returns a Service with policy p; now is the clock.
func NewService(store Store, p Policy, now func() time.Time) *Service {
	return &Service{store: store, policy: p, now: now}
}

// Policy is the flag policy the service applies.
func (s *Service) Policy() Policy { return s.policy }

func (s *Service) at() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// Agent is who flags.
type Agent struct {
	ID   string
	Name string
}

// Flag records agent's flag on target (Kind set) for reason, with an
// optional note. See DecideFlag for the refusals; an unknown reason or a
// note over MaxNoteLen is an input error and writes nothing.
func (s *Service) Flag(ctx context.Context, agent Agent, t Target, reason, note string) (FlagResult, error) {
	r, err := ParseReason(reason)
	if err != nil {
		return FlagResult{}, err
	}
	if note != "" {
		if err := input.Text("note", note, 1, MaxNoteLen, true); err != nil {
			return FlagResult{}, err
		}
	}
	if _, err := ParseKind(string(t.Kind)); err != nil {
		return FlagResult{}, err
	}
	res, err := s.store.FlagItem(ctx, FlagCommand{Target: t, AgentID: agent.ID, AgentName: agent.Name,
		Reason: r, Note: note, At: s.at()}, s.policy)
	var limited *ratelimit.Exceeded
	if errors.As(err, &limited) {
		return FlagResult{}, limited
	}
	if err != nil {
		return FlagResult{}, fmt.Errorf("flag %s %s: %w", t.Kind, t.ID, err)
	}
	return res, nil
}

// QuotaFlag names the flag rate in a ratelimit.Quota.
const QuotaFlag = "flag"

// FlagQuota reads where agentID stands against the flag rate now;
// limited is false when flags are not rate limited.
func (s *Service) FlagQuota(ctx context.Context, agentID string) (q ratelimit.Quota, limited bool, err error) {
	if !s.policy.Rate.Enabled() {
		return q, false, nil
	}
	w, err := s.store.FlagWindow(ctx, agentID)
	if err != nil {
		return q, false, fmt.Errorf("flag quota: %w", err)
	}
	q, limited = s.policy.Rate.Quota(QuotaFlag, w, s.now())
	return q, limited, nil
}

// Hide hides target (Kind may be empty) from every public surface, as
// actor, for reason (required).
func (s *Service) Hide(ctx context.Context, actor Actor, t Target, reason string) (Result, error) {
	return s.moderate(ctx, ActionHide, actor, t, reason, true)
}

// Unhide makes target public again, as actor, for reason (required).
func (s *Service) Unhide(ctx context.Context, actor Actor, t Target, reason string) (Result, error) {
	return s.moderate(ctx, ActionUnhide, actor, t, reason, true)
}

// Dismiss settles target's open flags, as actor, for an optional reason;
// an item its flags hid is public again.
func (s *Service) Dismiss(ctx context.Context, actor Actor, t Target, reason string) (Result, error) {
	return s.moderate(ctx, ActionDismiss, actor, t, reason, false)
}

func (s *Service) moderate(ctx context.Context, a Action, actor Actor, t Target, reason string, needReason bool) (Result, error) {
	if needReason || reason != "" {
		if err := input.Text("reason", reason, 1, MaxReasonLen, false); err != nil {
			return Result{}, err
		}
	}
	if t.Kind != "" {
		if _, err := ParseKind(string(t.Kind)); err != nil {
			return Result{}, err
		}
	}
	if _, err := ulid.ParseStrict(t.ID); err != nil {
		return Result{}, &ItemNotFoundError{Kind: t.Kind, ID: clip(t.ID, 64)}
	}
	res, err := s.store.Moderate(ctx, Command{Action: a, Target: t, Actor: actor, Reason: reason, At: s.at()})
	if err != nil {
		return Result{}, fmt.Errorf("%s %s: %w", a, t.ID, err)
	}
	return res, nil
}

// Queue sizes.
const (
	DefaultQueueSize = 50
	MaxQueueSize     = 500
)

// Queue returns the items waiting for review (limit nil:
// DefaultQueueSize), most flagged first, and how many wait in all.
func (s *Service) Queue(ctx context.Context, asked *int) ([]QueueEntry, int, error) {
	limit := DefaultQueueSize
	if asked != nil {
		if *asked < 1 || *asked > MaxQueueSize {
			return nil, 0, input.Errorf("limit", "must be between 1 and %d", MaxQueueSize)
		}
		limit = *asked
	}
	q, n, err := s.store.Queue(ctx, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("moderation queue: %w", err)
	}
	return q, n, nil
}

// Log page sizes.
const (
	DefaultLogPageSize = 50
	MaxLogPageSize     = 500
)

// Log returns one page of the audit log, newest first (pageSize nil:
// DefaultLogPageSize). The page token is the id of the last entry of
// the previous page: the log is the operator's and moderators' to read.
func (s *Service) Log(ctx context.Context, asked *int, pageToken string) (LogPage, error) {
	pageSize, err := input.PageSize(asked, DefaultLogPageSize, MaxLogPageSize)
	if err != nil {
		return LogPage{}, err
	}
	if pageToken != "" {
		if _, err := ulid.ParseStrict(pageToken); err != nil {
			return LogPage{}, input.Errorf("pageToken", "not a page token of the moderation log")
		}
	}
	p, err := s.store.ListLog(ctx, LogQuery{PageSize: pageSize, Before: pageToken})
	if err != nil {
		return LogPage{}, fmt.Errorf("moderation log: %w", err)
	}
	return p, nil
}

// AuthorResult is what HideAuthor did.
type AuthorResult struct {
	// Hidden counts the items it hid; Already those hidden before.
	Hidden  int `json:"hidden"`
	Already int `json:"alreadyHidden"`
}

// postsPage is how many of an author's items HideAuthor reads at a time.
const postsPage = 200

// HideAuthor hides everything agentID wrote (its discussions and
// replies), as actor, for reason: each item is hidden on its own, and
// logged, so a run that stops half way is finished by running it again.
func (s *Service) HideAuthor(ctx context.Context, agentID string, actor Actor, reason string) (AuthorResult, error) {
	var res AuthorResult
	if err := input.Text("reason", reason, 1, MaxReasonLen, false); err != nil {
		return res, err
	}
	after := ""
	for {
		ts, next, err := s.store.PostsBy(ctx, agentID, after, postsPage)
		if err != nil {
			return res, fmt.Errorf("posts of agent %s: %w", agentID, err)
		}
		for _, t := range ts {
			r, err := s.Hide(ctx, actor, t, reason)
			if err != nil {
				return res, err
			}
			if r.Changed {
				res.Hidden++
			} else {
				res.Already++
			}
		}
		if next == "" {
			return res, nil
		}
		after = next
	}
}
