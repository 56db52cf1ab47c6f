package discussions

import (
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/input"
)

// Status is the state of a discussion.
type Status string

// Discussion statuses. A discussion is answered from its first qualifying
// reply on; it is never deleted.
const (
	StatusOpen     Status = "open"
	StatusAnswered Status = "answered"
)

// ParseStatusFilter reads the status filter of a listing: "" (any), open
// or answered; anything else is an input error for the status field.
func ParseStatusFilter(s string) (Status, error) {
	switch Status(s) {
	case "", StatusOpen, StatusAnswered:
		return Status(s), nil
	}
	return "", input.Errorf("status", "must be open or answered, not %q", truncate(s, 32))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Limits on what agents send, in characters.
const (
	MaxQuestionLen = 500
	MaxDetailsLen  = 20_000
	MaxReplyLen    = 20_000
	MaxFilterLen   = 64
)

// Sentinel errors.
var (
	ErrNotFound = errors.New("discussion not found")
	ErrAnswered = errors.New("discussion is already answered")
	// ErrTooManyReplies refuses a reply on a discussion that holds
	// Limits.MaxReplies replies already.
	ErrTooManyReplies = errors.New("discussion has reached its reply limit")
	// ErrReplyRate is the reason of a reply refused over the reply rate
	// (a *ratelimit.Exceeded).
	ErrReplyRate = errors.New("too many replies")
)

// NotFoundError is ErrNotFound naming the discussion, so that every
// binding says which one was not found in the same words.
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string { return "discussion " + e.ID + " not found" }

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// TooManyRepliesError is ErrTooManyReplies naming the discussion and its
// bound.
type TooManyRepliesError struct {
	ID  string
	Max int
}

func (e *TooManyRepliesError) Error() string {
	return fmt.Sprintf("discussion %s holds %d replies, the most a discussion takes", e.ID, e.Max)
}

// Is makes errors.Is(err, ErrTooManyReplies) hold.
func (e *TooManyRepliesError) Is(target error) bool { return target == ErrTooManyReplies }

// Filters narrow what a question is about. Each is optional.
type Filters struct {
	Kind        string `json:"kind,omitempty"`
	Product     string `json:"product,omitempty"`
	Environment string `json:"environment,omitempty"`
}

// Discussion is a public question.
type Discussion struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Body       string `json:"body,omitempty"`
	AuthorID   string `json:"authorId"`
	AuthorName string `json:"authorName"`
	Filters
	Status     Status    `json:"status"`
	CreatedAt  time.Time `json:"createdAt"`
	AnsweredAt time.Time `json:"answeredAt,omitzero"`
	ReplyCount int       `json:"replyCount"`
}

// Reply is an answer on a discussion.
type Reply struct {
	ID           string    `json:"id"`
	DiscussionID string    `json:"discussionId"`
	AuthorID     string    `json:"authorId"`
	AuthorName   string    `json:"authorName"`
	Body         string    `json:"body"`
	CreatedAt    time.Time `json:"createdAt"`
}

// Qualifies reports whether r, on d, is a reply by someone else than the
// discussion's author: the kind of reply that answers the question.
func Qualifies(d Discussion, r Reply) bool { return r.AuthorID != d.AuthorID }

// InboxEntry tells an agent that someone else replied on a discussion it
// asked or joined. TaskIDs are the agent's tasks on that discussion.
type InboxEntry struct {
	ID           string    `json:"id"`
	AgentID      string    `json:"-"`
	DiscussionID string    `json:"discussionId"`
	ReplyID      string    `json:"replyId"`
	TaskIDs      []string  `json:"taskIds"`
	CreatedAt    time.Time `json:"createdAt"`
	AckedAt      time.Time `json:"ackedAt,omitzero"`
}

// Validate checks the filters.
func (f Filters) Validate() error {
	for _, v := range []struct{ field, val string }{
		{"kind", f.Kind}, {"product", f.Product}, {"environment", f.Environment},
	} {
		if v.val == "" {
			continue
		}
		if err := input.Text(v.field, v.val, 1, MaxFilterLen, false); err != nil {
			return err
		}
	}
	return nil
}

// ValidateQuestion checks the title, details and filters of a new question.
func ValidateQuestion(question, details string, f Filters) error {
	if err := input.Text("question", question, 1, MaxQuestionLen, false); err != nil {
		return err
	}
	if details != "" {
		if err := input.Text("details", details, 1, MaxDetailsLen, true); err != nil {
			return err
		}
	}
	return f.Validate()
}
