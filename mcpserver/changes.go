package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"

	"github.com/kfa-project/kfa/knowledge"
)

// cursorEncoding writes a cursor: the feed sequence number, 8 bytes big
// endian, then, once the feed has been trimmed, the trim the position was
// read after, 8 more; in unpadded URL-safe base64. Clients treat it as
// opaque.
var cursorEncoding = base64.RawURLEncoding.Strict()

// EncodeCursor is the get_changes cursor that resumes at p (the zero
// Position: the beginning).
func EncodeCursor(p knowledge.Position) string {
	b := binary.BigEndian.AppendUint64(nil, p.Seq)
	if p.Trimmed != 0 {
		b = binary.BigEndian.AppendUint64(b, p.Trimmed)
	}
	return cursorEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor made by EncodeCursor; "" is the beginning.
// Anything else, including another spelling of a valid cursor, is
// refused.
func DecodeCursor(s string) (knowledge.Position, error) {
	if s == "" {
		return knowledge.Position{}, nil
	}
	b, err := cursorEncoding.DecodeString(s)
	if err != nil || len(b) != 8 && len(b) != 16 {
		return knowledge.Position{}, errors.New("not a get_changes cursor")
	}
	p := knowledge.Position{Seq: binary.BigEndian.Uint64(b)}
	if len(b) == 16 {
		p.Trimmed = binary.BigEndian.Uint64(b[8:])
	}
	if EncodeCursor(p) != s {
		return knowledge.Position{}, errors.New("not a get_changes cursor")
	}
	return p, nil
}

// changes pages the records' change feed.
func (t *tools) changes(ctx context.Context, in ChangesInput) (ChangesOutput, error) {
	after, err := DecodeCursor(in.Cursor)
	if err != nil {
		return ChangesOutput{}, toolErrorf(OutcomeInvalid,
			"cursor %q is not a get_changes cursor: pass a nextCursor or a change's cursor from an earlier answer, "+
				"or an empty cursor to start at the beginning", in.Cursor)
	}
	p, err := t.d.Records.Changes(ctx, after, in.Limit)
	switch {
	case errors.Is(err, knowledge.ErrCursorTooOld):
		return ChangesOutput{}, toolErrorf(OutcomeInvalid,
			"cursor %q is too old: the change feed no longer holds the changes after it; start again with an empty cursor", in.Cursor)
	case errors.Is(err, knowledge.ErrCursorAhead):
		return ChangesOutput{}, toolErrorf(OutcomeInvalid,
			"cursor %q is past the end of this server's change feed (is it from another kfa database?); "+
				"start again with an empty cursor", in.Cursor)
	case err != nil:
		return ChangesOutput{}, t.fail(ctx, err)
	}
	out := ChangesOutput{Changes: make([]Change, len(p.Changes)), NextCursor: EncodeCursor(p.Next), HasMore: p.HasMore}
	for i, c := range p.Changes {
		out.Changes[i] = Change{ID: c.ID, Op: string(c.Op), UpdatedAt: knowledge.FormatTime(c.At), Cursor: EncodeCursor(p.At(c))}
	}
	return out, nil
}
