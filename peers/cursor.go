package peers

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// Phase is where a reader of the feed is: in the snapshot of the records,
// in the snapshot of the answered discussions, or following the log.
type Phase uint8

// The phases of a feed, in the order a reader goes through them.
const (
	PhaseRecords Phase = iota
	PhaseDiscussions
	PhaseLog
)

// Cursor is where a reader of the change feed stands. The zero Cursor is
// the beginning.
type Cursor struct {
	Phase Phase
	// After is the last document a snapshot phase listed ("" at its
	// start): a record id, or a discussion id.
	After string
	// Pos, in a snapshot, is where the log stood when the snapshot began
	// (the log phase follows from there); in the log phase, the last
	// event read.
	Pos changelog.Position
	// Epoch is the first 8 hex digits of the log's epoch ("" at the
	// beginning): a cursor of another database is refused.
	Epoch string
	// Started says the snapshot has begun (Pos is set): the zero Cursor
	// has not.
	Started bool
}

// ErrCursorExpired is a cursor the feed cannot resume from: the log no
// longer holds what follows it (trimmed), or it is of another database.
// The reader starts again from the beginning.
var ErrCursorExpired = errors.New("the change feed can no longer resume from this cursor; start again from the beginning (an empty cursor)")

// ErrNotCursor is text that is not a change feed cursor.
var ErrNotCursor = errors.New("not a change feed cursor")

// cursorFormat is the first byte of an encoded cursor.
const cursorFormat = 1

// MaxCursorLen bounds a cursor's text: a snapshot's id is at most a
// record id (knowledge.MaxIDLen).
const MaxCursorLen = 256

var cursorEncoding = base64.RawURLEncoding.Strict()

// String is the cursor's opaque text: "" for the beginning, else the
// format byte, the 4 bytes of the epoch tag, the phase, Pos.Tx and
// Pos.Seq as unsigned varints, then After's bytes, in unpadded URL-safe
// base64. ParseCursor reads it back.
func (c Cursor) String() string {
	if !c.Started {
		return ""
	}
	tag, err := hex.DecodeString(c.Epoch)
	if err != nil || len(tag) != 4 {
		tag = make([]byte, 4)
	}
	b := append([]byte{cursorFormat}, tag...)
	b = append(b, byte(c.Phase))
	b = binary.AppendUvarint(b, c.Pos.Tx)
	b = binary.AppendUvarint(b, c.Pos.Seq)
	b = append(b, c.After...)
	return cursorEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor String made; "" is the beginning. Anything
// else that is not exactly a cursor is ErrNotCursor.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	if len(s) > MaxCursorLen {
		return Cursor{}, ErrNotCursor
	}
	b, err := cursorEncoding.DecodeString(s)
	if err != nil || len(b) < 6 || b[0] != cursorFormat || Phase(b[5]) > PhaseLog {
		return Cursor{}, ErrNotCursor
	}
	c := Cursor{Started: true, Epoch: hex.EncodeToString(b[1:5]), Phase: Phase(b[5])}
	rest := b[6:]
	for _, dst := range []*uint64{&c.Pos.Tx, &c.Pos.Seq} {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return Cursor{}, ErrNotCursor
		}
		*dst, rest = v, rest[n:]
	}
	c.After = string(rest)
	// A snapshot resumes after a document id; the log phase names none.
	if (c.Phase == PhaseLog && c.After != "") || (c.After != "" && knowledge.ValidateID(c.After) != nil) {
		return Cursor{}, ErrNotCursor
	}
	if c.String() != s {
		return Cursor{}, ErrNotCursor
	}
	return c, nil
}

// epochTag is the part of a log's epoch a cursor carries.
func epochTag(epoch string) string {
	if len(epoch) > 8 {
		return epoch[:8]
	}
	return epoch
}
