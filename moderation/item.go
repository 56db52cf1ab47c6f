package moderation

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kfa-project/kfa/input"
)

// Kind is what an item is: a discussion (the question) or a reply.
type Kind string

// The kinds of item.
const (
	KindDiscussion Kind = "discussion"
	KindReply      Kind = "reply"
	// KindDocument is a document followed from a peer (federation):
	// this server's moderators hide it here, with the same commands and
	// log; package peers decides it (peers.DecideModerate).
	KindDocument Kind = "document"
)

// ParseKind reads "discussion", "reply" or "document".
func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case KindDiscussion, KindReply, KindDocument:
		return Kind(s), nil
	}
	return "", input.Errorf("kind", "must be discussion, reply or document, not %q", clip(s, 32))
}

// Reason is why an agent flags an item.
type Reason string

// The reasons of a flag.
const (
	ReasonSpam     Reason = "spam"
	ReasonWrong    Reason = "wrong"
	ReasonUnsafe   Reason = "unsafe"
	ReasonOffTopic Reason = "off-topic"
	ReasonOther    Reason = "other"
)

// Reasons lists every reason, in the order they are shown.
var Reasons = []Reason{ReasonSpam, ReasonWrong, ReasonUnsafe, ReasonOffTopic, ReasonOther}

// ParseReason reads a flag's reason; anything else is an input error
// for the reason field that lists the reasons.
func ParseReason(s string) (Reason, error) {
	for _, r := range Reasons {
		if Reason(s) == r {
			return r, nil
		}
	}
	names := make([]string, len(Reasons))
	for i, r := range Reasons {
		names[i] = string(r)
	}
	return "", input.Errorf("reason", "must be one of %s, not %q", strings.Join(names, ", "), clip(s, 32))
}

// Limits on what people send, in characters.
const (
	// MaxNoteLen bounds a flag's optional note.
	MaxNoteLen = 500
	// MaxReasonLen bounds a moderator's reason for an action.
	MaxReasonLen = 500
)

// DefaultHideThreshold is how many distinct agents' flags hide an item
// pending review, unless the server says otherwise.
const DefaultHideThreshold = 3

// Sentinel errors.
var (
	// ErrOwnContent refuses a flag on the flagger's own discussion or
	// reply.
	ErrOwnContent = errors.New("agents cannot flag their own content")
	// ErrFlagRate is the reason of a flag refused over the flag rate (a
	// *ratelimit.Exceeded).
	ErrFlagRate = errors.New("too many flags")
	// ErrItemNotFound is an item id that is neither a discussion's nor a
	// reply's (an *ItemNotFoundError).
	ErrItemNotFound = errors.New("item not found")
)

// ItemNotFoundError is ErrItemNotFound naming the id.
type ItemNotFoundError struct {
	Kind Kind // "" when the id was looked for as either
	ID   string
}

func (e *ItemNotFoundError) Error() string {
	what := "discussion or reply"
	if e.Kind != "" {
		what = string(e.Kind)
	}
	return fmt.Sprintf("no %s has the id %s", what, e.ID)
}

// Is makes errors.Is(err, ErrItemNotFound) hold.
func (e *ItemNotFoundError) Is(target error) bool { return target == ErrItemNotFound }

// Target names an item. ID is the discussion's or the reply's id (both
// are ULIDs of one space). Kind may be empty when the caller knows only
// the id (the store finds which it is); DiscussionID may be empty for a
// reply named by id alone, and when given, the reply must be on it.
type Target struct {
	Kind         Kind
	ID           string
	DiscussionID string
}

// Hidden says whether, and by whom, an item is hidden.
type Hidden string

// Who hid an item.
const (
	NotHidden         Hidden = ""
	HiddenByFlags     Hidden = "flags"
	HiddenByModerator Hidden = "moderator"
)

// Item is the moderation state of one discussion or reply that has ever
// been flagged or hidden.
type Item struct {
	ID           string `json:"id"`
	Kind         Kind   `json:"kind"`
	DiscussionID string `json:"discussionId"`
	// AuthorID is whose content it is.
	AuthorID string `json:"authorId"`
	// Round counts the reviews: a moderator's hide, unhide or dismiss
	// settles the open flags and starts the next round. Flags are open
	// while they are of the current round.
	Round int `json:"round"`
	// Flags is the number of open flags (distinct agents), Reasons the
	// open flags by reason.
	Flags   int            `json:"flags"`
	Reasons map[Reason]int `json:"reasons,omitempty"`
	// FirstFlagAt and LastFlagAt are the times of the round's first and
	// latest flags (zero without open flags).
	FirstFlagAt time.Time `json:"firstFlagAt,omitzero"`
	LastFlagAt  time.Time `json:"lastFlagAt,omitzero"`
	// Hidden says who hid it; HiddenAt since when.
	Hidden   Hidden    `json:"hidden,omitempty"`
	HiddenAt time.Time `json:"hiddenAt,omitzero"`
	// Queued says that the item waits for a moderator: it has open flags,
	// or flags hid it. The decisions keep it (see waits); the stores keep
	// the review queue's index by it.
	Queued bool `json:"queued,omitempty"`
}

// waits reports whether it waits for a moderator.
// IsHidden reports whether the item is hidden (by flags or a moderator).
func (it Item) IsHidden() bool { return it.Hidden != NotHidden }

// OnReply reports whether the item is a reply (else a discussion).
func (it Item) OnReply() bool { return it.Kind == KindReply }

func (it Item) waits() bool { return it.Flags > 0 || it.Hidden == HiddenByFlags }

// Waiting is since when the item waits for review: its round's first
// flag, or when flags hid it.
func (it Item) Waiting() time.Time {
	if !it.FirstFlagAt.IsZero() {
		return it.FirstFlagAt
	}
	return it.HiddenAt
}

// CompareQueued orders the review queue: the most open flags first, then
// the item waiting longest, then by id.
func CompareQueued(a, b Item) int {
	if a.Flags != b.Flags {
		return b.Flags - a.Flags
	}
	if c := a.Waiting().Compare(b.Waiting()); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// Flag is one agent's flag on an item. An agent flags an item once, ever.
type Flag struct {
	ItemID    string    `json:"itemId"`
	AgentID   string    `json:"agentId"`
	AgentName string    `json:"agentName"`
	Reason    Reason    `json:"reason"`
	Note      string    `json:"note,omitempty"`
	At        time.Time `json:"at"`
	// Round is the item's round the flag was made in: open while it is
	// the item's.
	Round int `json:"round"`
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
