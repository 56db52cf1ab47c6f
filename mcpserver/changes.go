package mcpserver

import (
	"context"
	"errors"

	"github.com/kfa-project/kfa/knowledge"
)

// EncodeCursor is the get_changes cursor that resumes at p (the zero
// Position: the beginning, ""); see knowledge.ParseCursor for its form.
func EncodeCursor(p knowledge.Position) string { return p.Cursor() }

// DecodeCursor reads a cursor made by EncodeCursor; "" is the beginning.
// A cursor of the feed kept before the change log is
// knowledge.ErrCursorTooOld; anything else that is not exactly a cursor
// is refused.
func DecodeCursor(s string) (knowledge.Position, error) { return knowledge.ParseCursor(s) }

// changes pages the records' change feed.
func (t *tools) changes(ctx context.Context, in ChangesInput) (ChangesOutput, error) {
	after, err := DecodeCursor(in.Cursor)
	if errors.Is(err, knowledge.ErrCursorTooOld) {
		return ChangesOutput{}, toolErrorf(OutcomeInvalid,
			"cursor %q is too old: the change feed no longer holds the changes after it; start again with an empty cursor", in.Cursor)
	}
	if err != nil {
		return ChangesOutput{}, toolErrorf(OutcomeInvalid,
			"cursor %q is not a get_changes cursor: pass a nextCursor or a change's cursor from an earlier answer, "+
				"or an empty cursor to start at the beginning", in.Cursor)
	}
	p, err := t.d.Service.RecordChanges(ctx, after, in.Limit)
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
