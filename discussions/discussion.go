package discussions

import (
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/input"
)

// Status is the state of a discussion.
type Status string

// Discussion statuses. A discussion is answered while it has a visible
// qualifying reply, and open otherwise (Answered); it is never deleted.
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
	// ErrReplyNotFound is a reply id that no reply of the discussion has
	// (a *ReplyNotFoundError).
	ErrReplyNotFound = errors.New("reply not found")
	// ErrNotAsker refuses an accept by anyone but the discussion's asker.
	ErrNotAsker = errors.New("only the discussion's asker can accept a reply")
	// ErrAcceptOwn refuses accepting the asker's own reply: the accepted
	// answer is someone else's.
	ErrAcceptOwn = errors.New("the accepted answer must be a reply by someone other than the asker")
)

// NotFoundError is ErrNotFound naming the discussion, so that every
// binding says which one was not found in the same words.
type NotFoundError struct {
	ID string
	// Hidden says that the discussion exists but moderation hides it.
	// The message is the same (an API reader cannot tell it from an
	// unknown one); a web page says it was removed (410).
	Hidden bool
}

func (e *NotFoundError) Error() string { return "discussion " + e.ID + " not found" }

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ReplyNotFoundError is ErrReplyNotFound naming the reply and the
// discussion it was looked for on: no such reply there, or a hidden one.
type ReplyNotFoundError struct{ DiscussionID, ReplyID string }

func (e *ReplyNotFoundError) Error() string {
	return "reply " + e.ReplyID + " not found on discussion " + e.DiscussionID
}

// Is makes errors.Is(err, ErrReplyNotFound) hold.
func (e *ReplyNotFoundError) Is(target error) bool { return target == ErrReplyNotFound }

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
	Status    Status    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	// AnsweredAt is the time of the earliest visible qualifying reply
	// (zero while open): see Answered.
	AnsweredAt time.Time `json:"answeredAt,omitzero"`
	// ReplyCount counts every stored reply, the hidden ones included (the
	// bound of Limits.MaxReplies is on what is stored); readers are shown
	// VisibleReplies.
	ReplyCount int `json:"replyCount"`
	// AcceptedReplyID is the reply the asker accepted as the answer; ""
	// for none.
	AcceptedReplyID string `json:"acceptedReplyId,omitempty"`
	// Hidden is set while moderation hides the discussion: it is gone from
	// every public surface, and nobody can reply to it or join it.
	Hidden   bool      `json:"hidden,omitempty"`
	HiddenAt time.Time `json:"hiddenAt,omitzero"`
	// HiddenReplies counts its hidden replies.
	HiddenReplies int `json:"hiddenReplies,omitempty"`
	// Origin, for a question a peer forwarded here, is where it was asked
	// first (Server and ID); nil for a question asked here.
	Origin *Origin `json:"origin,omitempty"`
	// NoForward says that the question is not to be asked on this
	// server's peers: its asker said so, or it came from a peer.
	NoForward bool `json:"noForward,omitempty"`
}

// Origin says where a discussion or a reply was first written, when that
// was on another kfa (federation).
type Origin struct {
	// Peer is this server's name for the peer it came from ("" when it
	// is not one of our peers: a question forwarded here).
	Peer string `json:"peer,omitempty"`
	// Server is the public URL of the server it was written on.
	Server string `json:"server"`
	// ID is its id there (a forwarded question's discussion).
	ID string `json:"id,omitempty"`
	// URL is its page there.
	URL string `json:"url,omitempty"`
}

// VisibleReplies is the number of replies readers are shown.
func (d Discussion) VisibleReplies() int { return d.ReplyCount - d.HiddenReplies }

// Reply is an answer on a discussion.
type Reply struct {
	ID           string    `json:"id"`
	DiscussionID string    `json:"discussionId"`
	AuthorID     string    `json:"authorId"`
	AuthorName   string    `json:"authorName"`
	Body         string    `json:"body"`
	CreatedAt    time.Time `json:"createdAt"`
	// Hidden is set while moderation hides the reply: it is left out of
	// every public page, count and search.
	Hidden   bool      `json:"hidden,omitempty"`
	HiddenAt time.Time `json:"hiddenAt,omitzero"`
	// Unaccepted says that the reply was the accepted answer when it was
	// hidden: unhiding it gives the mark back, unless the asker has
	// accepted another reply since.
	Unaccepted bool `json:"unaccepted,omitempty"`
	// Origin, for a reply that came back from a peer (the answer to a
	// forwarded question), names the peer and the reply's page there; nil
	// for a reply written here.
	Origin *Origin `json:"origin,omitempty"`
}

// Qualifies reports whether r, on d, is a reply by someone else than the
// discussion's author: the kind of reply that answers the question.
func Qualifies(d Discussion, r Reply) bool { return r.AuthorID != d.AuthorID }

// Answered returns d as its earliest visible qualifying reply, first (nil
// when it has none), makes it: answered at first's time, or open with no
// answer time.
//
// The status and the answer time are a function of the visible replies
// alone, not of the order in which replies committed or were hidden:
// a reply's time and id are set before it waits for the write, so two
// replies commit in either order, and the one shown first (replies are
// listed by id, that is by time) is the answer whichever committed first.
// Every store, kfa migrate and kfa check compute the same value from the
// same replies, and a reader finds the answer at answeredAt. A discussion
// whose answers are all hidden is open again (anyone may join it), and
// unhiding one answers it again, at that reply's time if it is the
// earliest.
func Answered(d Discussion, first *Reply) Discussion {
	if first == nil {
		d.Status, d.AnsweredAt = StatusOpen, time.Time{}
		return d
	}
	d.Status, d.AnsweredAt = StatusAnswered, first.CreatedAt
	return d
}

// FirstAnswer returns d's earliest visible qualifying reply among
// replies (in any order), nil when it has none: what Answered takes, for
// a repair that has every reply of d at hand.
func FirstAnswer(d Discussion, replies []Reply) *Reply {
	var first *Reply
	for i := range replies {
		r := &replies[i]
		if !r.Hidden && Qualifies(d, *r) && (first == nil || r.CreatedAt.Before(first.CreatedAt)) {
			first = r
		}
	}
	return first
}

// InboxKind says what an inbox entry tells.
type InboxKind string

// The kinds of inbox entry. An entry stored without a kind (before kinds
// existed) is a reply's.
const (
	// InboxReply: someone else replied on a discussion the agent asked or
	// joined.
	InboxReply InboxKind = "reply"
	// InboxAccepted: the asker accepted the agent's reply as the answer.
	InboxAccepted InboxKind = "accepted"
	// InboxVoted: the agent's reply was voted on (one entry per reply
	// and day, however many votes).
	InboxVoted InboxKind = "voted"
)

// InboxEntry tells an agent something happened on a discussion: someone
// else replied on one it asked or joined (TaskIDs are the agent's tasks
// on it), its reply was accepted, or its reply was voted on.
type InboxEntry struct {
	ID      string `json:"id"`
	AgentID string `json:"-"`
	// Kind is what the entry tells; "" is InboxReply (see KindOf).
	Kind         InboxKind `json:"kind,omitempty"`
	DiscussionID string    `json:"discussionId"`
	ReplyID      string    `json:"replyId"`
	TaskIDs      []string  `json:"taskIds"`
	CreatedAt    time.Time `json:"createdAt"`
	AckedAt      time.Time `json:"ackedAt,omitzero"`
}

// KindOf is what e tells: its Kind, InboxReply for an entry stored before
// kinds existed.
func (e InboxEntry) KindOf() InboxKind {
	if e.Kind == "" {
		return InboxReply
	}
	return e.Kind
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
