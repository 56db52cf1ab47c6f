package changelog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind says what an event records.
type Kind string

// The kinds of event. The comment of each names what its Event fields
// hold; a field it does not name is empty.
const (
	// TaskCreated: an ask created task ID, owned by Owner, mapped to
	// discussion Ref.
	TaskCreated Kind = "task.created"
	// TaskMoved: task ID of Owner moved to state Ref (an a2a.TaskState:
	// completed by a reply, or canceled).
	TaskMoved Kind = "task.moved"
	// DiscussionOpened: an ask opened discussion ID, asked by Owner.
	DiscussionOpened Kind = "discussion.opened"
	// DiscussionReplied: Owner replied on discussion ID with reply Ref;
	// Note is NoteQualifying when the reply qualifies (its author is not
	// the discussion's asker), so a follower that counts qualifying
	// replies needs no read.
	DiscussionReplied Kind = "discussion.replied"
	// DiscussionChanged: discussion ID changed otherwise (Ref says how,
	// e.g. a reply hidden or accepted); followers re-read it.
	DiscussionChanged Kind = "discussion.changed"
	// ItemFlagged: agent Owner flagged item ID (a discussion, or a reply)
	// of discussion Ref; Note is the flag's reason.
	ItemFlagged Kind = "item.flagged"
	// ItemHidden: item ID (a discussion, or a reply) of discussion Ref was
	// hidden from every public surface; Note says by whom (NoteByFlags or
	// NoteByModerator); Owner is the item's author, whose reputation it
	// moved. Followers re-read discussion Ref.
	ItemHidden Kind = "item.hidden"
	// ItemUnhidden: item ID of discussion Ref is public again; Owner is
	// its author. Followers re-read discussion Ref.
	ItemUnhidden Kind = "item.unhidden"
	// ItemVoted: agent Owner voted on item ID (a reply of discussion Ref,
	// or, when Ref is empty, the knowledge record ID); Note is the
	// author whose reputation the vote moved ("" for a record).
	// Followers re-read the item's signals and the author's reputation.
	ItemVoted Kind = "item.voted"
	// ItemVerified: agent Owner reported whether item ID worked; the
	// other fields are ItemVoted's.
	ItemVerified Kind = "item.verified"
	// ReputationReset: a moderator reset agent ID's reputation.
	ReputationReset Kind = "reputation.reset"
	// RecordUpserted: knowledge record ID was added or changed; At is its
	// updatedAt.
	RecordUpserted Kind = "record.upserted"
	// RecordDeleted: knowledge record ID was deleted at At.
	RecordDeleted Kind = "record.deleted"
	// DeliveryDue: push delivery ID, for destination Ref, became due (a
	// transition wrote it, or an operator retried it).
	DeliveryDue Kind = "delivery.due"
	// AgentCreated: agent ID was created.
	AgentCreated Kind = "agent.created"
	// AgentRotated: agent ID got a new credential; its older ones end at
	// once or, when Ref is not empty, at the RFC 3339 time Ref.
	AgentRotated Kind = "agent.rotated"
	// AgentRevoked: agent ID was disabled and its credentials deleted.
	AgentRevoked Kind = "agent.revoked"
	// AgentLinked: agent ID was linked to the OAuth identity of issuer
	// Ref and subject Note (by the operator, or when its first token
	// created it).
	AgentLinked Kind = "agent.linked"
	// AgentUnlinked: the identity of issuer Ref and subject Note left
	// revoked agent ID for another agent (kfa agent link --replace),
	// whose AgentLinked follows.
	AgentUnlinked Kind = "agent.unlinked"
)

// NoteQualifying is the Note of a DiscussionReplied event whose reply
// qualifies.
const NoteQualifying = "qualifying"

// Notes of an ItemHidden event: the flags of enough agents hid the item
// (pending review), or a moderator did.
const (
	NoteByFlags     = "flags"
	NoteByModerator = "moderator"
)

// RefAccepted is the Ref of a DiscussionChanged event of an accepted
// reply; its Note is the reply's id ("" when the mark was taken off).
const RefAccepted = "accepted"

// RefStatus is the Ref of a DiscussionChanged event of a status or an
// answer time moved by hiding or unhiding a reply (the discussion's last
// visible answer hidden, or an earlier one shown); its Note is the new
// status.
const RefStatus = "status"

// IsRecord reports whether k is a knowledge record's kind: the events the
// records' change feed (get_changes) is made of.
func (k Kind) IsRecord() bool { return k == RecordUpserted || k == RecordDeleted }

// Event is one change, as a decision made it and the log holds it.
type Event struct {
	// Pos is where the event is in the log. Decisions leave it zero; the
	// store sets it when the event is read back.
	Pos   Position
	Kind  Kind
	ID    string // the subject: a task, discussion, record, delivery or agent id
	Owner string // the agent the change is of, when the kind names one
	Ref   string // a second id or a value, as the kind says
	// Note is a fact of the change that a follower needs and the other
	// fields do not hold, as the kind says (most kinds have none).
	Note string
	At   time.Time // when the change happened (UTC, millisecond precision)
}

// Position is a place in the log. Positions only grow: an event appended
// by a transaction that commits later never reads before one already
// read. The zero Position is before every event.
//
// On bbolt Tx is 0 and Seq counts the events. On PostgreSQL Tx is the
// id of the transaction that appended the event and Seq orders the
// events of one transaction (and the log as a whole); a reader is shown
// only the events of transactions older than every transaction still
// running, so none can commit behind its cursor.
type Position struct {
	Tx  uint64
	Seq uint64
}

// IsZero reports whether p is the start of the log.
func (p Position) IsZero() bool { return p == Position{} }

// Compare returns -1, 0 or +1 as p is before, at or after q.
func (p Position) Compare(q Position) int {
	switch {
	case p.Tx != q.Tx:
		if p.Tx < q.Tx {
			return -1
		}
		return 1
	case p.Seq != q.Seq:
		if p.Seq < q.Seq {
			return -1
		}
		return 1
	}
	return 0
}

// Before reports whether p is before q.
func (p Position) Before(q Position) bool { return p.Compare(q) < 0 }

// String is the position's text form: "SEQ" when Tx is 0, else "TX.SEQ".
// ParsePosition reads it back.
func (p Position) String() string {
	if p.Tx == 0 {
		return strconv.FormatUint(p.Seq, 10)
	}
	return strconv.FormatUint(p.Tx, 10) + "." + strconv.FormatUint(p.Seq, 10)
}

// ErrBadPosition is text that is not a Position.
var ErrBadPosition = errors.New("not a change log position")

// ParsePosition reads Position.String's form.
func ParsePosition(s string) (Position, error) {
	txs, seqs, dotted := strings.Cut(s, ".")
	if !dotted {
		txs, seqs = "0", s
	}
	tx, err1 := strconv.ParseUint(txs, 10, 64)
	seq, err2 := strconv.ParseUint(seqs, 10, 64)
	if err1 != nil || err2 != nil || (dotted && tx == 0) {
		return Position{}, fmt.Errorf("%w: %q", ErrBadPosition, s)
	}
	return Position{Tx: tx, Seq: seq}, nil
}

// State is where the log stands.
type State struct {
	// First is the oldest event still held; zero when the log is empty.
	First Position
	// Last is the newest event a reader can read now (zero before the
	// first): a follower that starts at the head starts after it.
	Last Position
	// Trimmed is the newest position trimming removed (zero: none). A
	// reader whose cursor is before it may have missed events.
	Trimmed Position
	// Epoch names the log: another database has another epoch, so a
	// follower notices when the store under it was replaced.
	Epoch string
}

// Tail is one read of the log by a follower (Log.ReadTail).
type Tail struct {
	// Events are up to the limit of events after the position read from,
	// oldest first, as ReadLog returns them.
	Events []Event
	// Held, when not zero, says that events written at or after it may
	// have committed without being readable yet (on PostgreSQL, behind a
	// transaction that began earlier and still runs). Zero: every event
	// committed before the read began is in Events or after them.
	Held time.Time
	// Trimmed is State.Trimmed as of the read: a reader whose position is
	// before it may have missed events.
	Trimmed Position
	// At is the event at the position read from, as the log holds it
	// now (zero when it holds none there). A reader compares it with the
	// event it read there: the log may have lost it (on PostgreSQL, a
	// failover to a standby that had not received it, under asynchronous
	// replication), and then new events may come at positions the reader
	// has passed (see Runner).
	At Event
}

// Log is the change log as its followers read it. Both stores implement
// it.
type Log interface {
	// ReadLog returns up to limit events after the position after, oldest
	// first, each with its Pos. It returns only events no later commit
	// can come before, so a reader that moves its cursor to the last
	// event returned misses nothing.
	ReadLog(ctx context.Context, after Position, limit int) ([]Event, error)
	// ReadTail is ReadLog for a follower: the events, and how complete the
	// read is (see Tail), in one read.
	ReadTail(ctx context.Context, after Position, limit int) (Tail, error)
	// LogState says where the log stands.
	LogState(ctx context.Context) (State, error)
	// WakeLog returns a channel that receives (without blocking the
	// writer, coalescing) after events may have been appended, by this
	// process or, on PostgreSQL, by any other on the database; stop ends
	// the subscription. A wake-up is a hint: the log is the data.
	WakeLog() (wake <-chan struct{}, stop func())
}

// Cursor is a durable follower's position as the store keeps it: the log
// is trimmed behind the slowest cursor updated within the retention
// horizon (see Trimmable).
type Cursor struct {
	Name    string
	Pos     Position
	Updated time.Time
}

// Cursors keeps the durable followers' cursors. Both stores implement it.
type Cursors interface {
	// SaveCursor sets cursor name to pos, updated at at.
	SaveCursor(ctx context.Context, name string, pos Position, at time.Time) error
	// ListCursors returns every cursor, by name.
	ListCursors(ctx context.Context) ([]Cursor, error)
}

// Trimmable is a log that can be trimmed. Both stores implement it.
type Trimmable interface {
	// TrimLog removes the events written before before that every cursor
	// updated at or after before has passed, except the newest event of
	// the log, and, among the record events, the latest one of each
	// record (a reader of the records' feed starting from the beginning
	// needs it) unless it is a deletion. A cursor not updated since before
	// holds nothing back and is deleted. It moves State.Trimmed (and the
	// records feed's) on, and returns how many events it removed.
	TrimLog(ctx context.Context, before time.Time) (int, error)
}
