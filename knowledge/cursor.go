package knowledge

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/kfa-project/kfa/changelog"
)

// A get_changes cursor is a Position in unpadded URL-safe base64: the
// format byte cursorFormat, the 4 bytes of the log's epoch tag, then
// At.Tx, At.Seq, Trimmed.Tx and Trimmed.Seq as unsigned varints. The
// empty cursor is the beginning. Clients treat cursors as opaque.
//
// Before the feed became the change log's record events (schema 8 on
// bbolt, 5 on PostgreSQL), a cursor was the feed's sequence number (8
// bytes, big-endian) and, once trimmed, the trim's (8 more). Such a
// cursor is answered as too old: its positions mean nothing in the log,
// and a reader that starts over still sees every record.
const cursorFormat = 1

var cursorEncoding = base64.RawURLEncoding.Strict()

// ErrNotCursor is text that is not a get_changes cursor.
var ErrNotCursor = errors.New("not a get_changes cursor")

// Cursor is the get_changes cursor that resumes at p.
func (p Position) Cursor() string {
	if p == (Position{}) {
		return ""
	}
	b := []byte{cursorFormat}
	tag, err := hex.DecodeString(p.Epoch)
	if err != nil || len(tag) != 4 {
		tag = make([]byte, 4)
	}
	b = append(b, tag...)
	for _, n := range []uint64{p.At.Tx, p.At.Seq, p.Trimmed.Tx, p.Trimmed.Seq} {
		b = binary.AppendUvarint(b, n)
	}
	return cursorEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor made by Position.Cursor; "" is the
// beginning. A cursor of the feed before the change log is
// ErrCursorTooOld; anything else that is not exactly a cursor,
// ErrNotCursor.
func ParseCursor(s string) (Position, error) {
	if s == "" {
		return Position{}, nil
	}
	b, err := cursorEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return Position{}, ErrNotCursor
	}
	if (len(b) == 8 || len(b) == 16) && b[0] == 0 {
		return Position{}, fmt.Errorf("%w: it is a cursor of the change feed this server kept before its change log", ErrCursorTooOld)
	}
	if b[0] != cursorFormat || len(b) < 5 {
		return Position{}, ErrNotCursor
	}
	p := Position{Epoch: hex.EncodeToString(b[1:5])}
	rest := b[5:]
	var n [4]uint64
	for i := range n {
		v, k := binary.Uvarint(rest)
		if k <= 0 {
			return Position{}, ErrNotCursor
		}
		n[i], rest = v, rest[k:]
	}
	if len(rest) != 0 {
		return Position{}, ErrNotCursor
	}
	p.At = changelog.Position{Tx: n[0], Seq: n[1]}
	p.Trimmed = changelog.Position{Tx: n[2], Seq: n[3]}
	if p.Cursor() != s {
		return Position{}, ErrNotCursor
	}
	return p, nil
}
