package knowledge

import (
	"context"
	"errors"
	"fmt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/input"
)

// Page sizes of Changes.
const (
	DefaultChangesLimit = 100
	MaxChangesLimit     = 500
)

// Errors of Changes: a position the feed cannot resume from.
var (
	// ErrCursorTooOld means the position is older than the feed's
	// retention horizon: changes after it were trimmed away, so a reader
	// must start again from the beginning (an empty cursor), which still
	// lists every record.
	ErrCursorTooOld = errors.New("the change feed no longer holds the changes after this position")
	// ErrCursorAhead means the position is past the newest entry the feed
	// ever had: it comes from another database file (a restored backup, a
	// different server).
	ErrCursorAhead = errors.New("the position is past the end of this change feed")
)

// Position is where a reader of the change feed stands: right after the
// record event At (the zero Position: at the beginning), having read the
// feed as it stood after the trim Trimmed (FeedState.Trimmed when the
// position was handed out), in the log of epoch Epoch (the first 8 hex
// digits of FeedState.Epoch; empty at the beginning). Trimmed tells a
// reader that started after a trim, whose positions within the trimmed
// part of the feed are sound (it never saw what was removed), from one
// that started before it and may have missed a change.
type Position struct {
	At      changelog.Position
	Trimmed changelog.Position
	Epoch   string
}

// epochTag is the part of a log's epoch a cursor carries.
func epochTag(epoch string) string {
	if len(epoch) > 8 {
		return epoch[:8]
	}
	return epoch
}

// ChangesPage is one page of the change feed, oldest first.
type ChangesPage struct {
	Changes []Change
	// Next is the position right after the last change of the page (the
	// requested position when the page is empty): a reader that keeps it
	// sees only later changes.
	Next Position
	// HasMore is true when the feed holds changes after Next already.
	HasMore bool
}

// At is the position right after the change c, read while the feed stood
// after the trim p.Next.Trimmed.
func (p ChangesPage) At(c Change) Position {
	return Position{At: c.Pos, Trimmed: p.Next.Trimmed, Epoch: p.Next.Epoch}
}

// Changes returns up to limit changes after the position after (the zero
// Position: from the beginning), oldest first. limit 0 means
// DefaultChangesLimit. From the beginning, the feed holds the latest
// entry of every record, however old (see changelog.Trimmable). A
// position handed out before a trim that removed changes after it is
// ErrCursorTooOld: the reader may have missed a change and must start
// over. A position past the feed's end, from a later trim than the
// feed's, or of another database's log, is ErrCursorAhead.
func (s *Service) Changes(ctx context.Context, after Position, limit int) (ChangesPage, error) {
	if limit == 0 {
		limit = DefaultChangesLimit
	}
	if limit < 1 || limit > MaxChangesLimit {
		return ChangesPage{}, input.Errorf("limit", "must be an integer from 1 to %d", MaxChangesLimit)
	}
	// The feed's state and the page are read together; the page is read
	// before it is known to be wanted, since a cursor that is refused
	// below is rare and the read is one round trip either way.
	st, chs, err := s.store.Changes(ctx, after.At, limit+1)
	if err != nil {
		return ChangesPage{}, fmt.Errorf("read the change feed after %s: %w", after.At, err)
	}
	tag := epochTag(st.Epoch)
	switch {
	case after.Epoch != "" && after.Epoch != tag:
		return ChangesPage{}, fmt.Errorf("%w: it is a position in another database's log", ErrCursorAhead)
	case st.Last.Before(after.At) || st.Trimmed.Before(after.Trimmed):
		return ChangesPage{}, ErrCursorAhead
	case !after.At.IsZero() && after.Trimmed.Before(st.Trimmed) && after.At.Before(st.Trimmed):
		return ChangesPage{}, ErrCursorTooOld
	}
	p := ChangesPage{Changes: chs, Next: Position{At: after.At, Trimmed: st.Trimmed, Epoch: tag}}
	if len(chs) > limit {
		p.Changes, p.HasMore = chs[:limit], true
	}
	if n := len(p.Changes); n > 0 {
		p.Next.At = p.Changes[n-1].Pos
	}
	return p, nil
}
