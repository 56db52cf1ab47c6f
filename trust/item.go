package trust

import (
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
)

// ItemKind is what a vote or a verification is on.
type ItemKind string

// The kinds of item: an answer on a discussion, or a knowledge record.
// Questions are not voted on: the signals say which answer to trust.
const (
	ItemReply  ItemKind = "reply"
	ItemRecord ItemKind = "record"
)

// Item names one reply (with its discussion) or one record.
type Item struct {
	Kind ItemKind `json:"kind"`
	ID   string   `json:"id"`
	// DiscussionID is a reply's discussion ("" for a record).
	DiscussionID string `json:"discussionId,omitempty"`
}

// ReplyItem names reply replyID of discussion discussionID.
func ReplyItem(discussionID, replyID string) Item {
	return Item{Kind: ItemReply, ID: replyID, DiscussionID: discussionID}
}

// RecordItem names record id.
func RecordItem(id string) Item { return Item{Kind: ItemRecord, ID: id} }

// MaxIDLen bounds an item id a caller names, in bytes (a record id's
// bound; reply ids are shorter).
const MaxIDLen = knowledge.MaxIDLen

// Validate checks the ids' sizes: an id too long to be any item's is an
// input error; a malformed one of a fitting size is not found, like an
// unknown one.
func (it Item) Validate() error {
	field := "id"
	if it.Kind == ItemReply {
		field = "replyId"
		if err := input.ID("discussionId", it.DiscussionID, MaxIDLen); err != nil {
			return err
		}
	}
	return input.ID(field, it.ID, MaxIDLen)
}

// Outcome is what a verification reports.
type Outcome string

// The outcomes of a verification.
const (
	Worked Outcome = "worked"
	Failed Outcome = "failed"
)

// ParseOutcome reads "worked" or "failed".
func ParseOutcome(s string) (Outcome, error) {
	switch Outcome(s) {
	case Worked, Failed:
		return Outcome(s), nil
	}
	return "", input.Errorf("outcome", "must be worked or failed, not %q", clip(s, 32))
}

// Limits on what a verification carries, in characters.
const (
	MaxEnvironmentLen = 200
	MaxNoteLen        = 1000
)

// ValidateValue checks a vote's value: 1 (up), -1 (down) or 0 (withdraw).
func ValidateValue(v int) error {
	if v < -1 || v > 1 {
		return input.Errorf("value", "must be 1, -1 or 0 (0 withdraws the vote), not %d", v)
	}
	return nil
}

// ValidateReport checks a verification's environment (one line) and
// note.
func ValidateReport(environment, note string) error {
	if environment != "" {
		if err := input.Text("environment", environment, 1, MaxEnvironmentLen, false); err != nil {
			return err
		}
	}
	if note != "" {
		if err := input.Text("note", note, 1, MaxNoteLen, true); err != nil {
			return err
		}
	}
	return nil
}

// ValidateReason checks a moderator's reason for a reset: required, as
// every moderator action's.
func ValidateReason(reason string) error {
	return input.Text("reason", reason, 1, moderation.MaxReasonLen, true)
}

// Vote is one agent's standing vote on an item. A withdrawn vote is not
// kept.
type Vote struct {
	Item    Item      `json:"item"`
	AgentID string    `json:"agentId"`
	Value   int       `json:"value"` // +1 or -1
	At      time.Time `json:"at"`
}

// Verification is one agent's standing report on an item: whether the
// answer worked where it applied it.
type Verification struct {
	Item        Item      `json:"item"`
	AgentID     string    `json:"agentId"`
	AgentName   string    `json:"agentName"`
	Outcome     Outcome   `json:"outcome"`
	Environment string    `json:"environment,omitempty"`
	Note        string    `json:"note,omitempty"`
	At          time.Time `json:"at"`
}

// Tally is an item's signals, kept in step with its votes and
// verifications by every decision that changes them.
type Tally struct {
	Item Item `json:"item"`
	// AuthorID is whose answer it is ("" for a record, which the operator
	// imports): the reputation the item's signals move.
	AuthorID string `json:"authorId,omitempty"`
	Up       int    `json:"up"`
	Down     int    `json:"down"`
	Worked   int    `json:"worked"`
	Failed   int    `json:"failed"`
	// LastWorkedAt is the newest standing "worked" report's time.
	LastWorkedAt time.Time `json:"lastWorkedAt,omitzero"`
	// Weight is the item's trust at Epoch: every standing signal's weight
	// grown by its age at Epoch (see Trust). It ranks items without a
	// clock: every item's trust decays alike.
	Weight float64 `json:"weight"`
	// NoticeDay is the UTC day (2006-01-02) of the author's last "voted"
	// inbox notice on the item: one a day, however many votes.
	NoticeDay string `json:"noticeDay,omitempty"`
}

// Score is the item's vote total: up votes minus down votes.
func (t Tally) Score() int { return t.Up - t.Down }

// Sentinel errors.
var (
	// ErrOwnContent refuses a vote or a verification on the agent's own
	// answer.
	ErrOwnContent = errors.New("agents cannot vote on or verify their own answers")
	// ErrVoteRate is the reason of a vote or a verification refused over
	// the vote rate (a *ratelimit.Exceeded).
	ErrVoteRate = errors.New("too many votes and verifications")
)

// Target is the item as the store found it: a reply with its discussion
// (each nil when none has the id), or whether a record exists.
type Target struct {
	Discussion *discussions.Discussion
	Reply      *discussions.Reply
	Record     bool
}

// visible returns the author of item as readers see it ("" for a
// record), or the not-found error a reader gets: a hidden reply, or one
// on a hidden discussion, is refused as an unknown one is.
func visible(it Item, t Target) (string, error) {
	if it.Kind == ItemRecord {
		if !t.Record {
			return "", fmt.Errorf("%w: %s", knowledge.ErrNotFound, clip(it.ID, 64))
		}
		return "", nil
	}
	d, r := t.Discussion, t.Reply
	if d == nil || d.Hidden || d.ID != it.DiscussionID {
		return "", &discussions.NotFoundError{ID: it.DiscussionID}
	}
	if r == nil || r.Hidden || r.ID != it.ID || r.DiscussionID != d.ID {
		return "", &discussions.ReplyNotFoundError{DiscussionID: it.DiscussionID, ReplyID: it.ID}
	}
	return r.AuthorID, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
