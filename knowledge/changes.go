package knowledge

import (
	"context"
	"errors"
	"fmt"

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

// ChangesPage is one page of the change feed, oldest first.
type ChangesPage struct {
	Changes []Change
	// Next is the position right after the last change of the page (the
	// requested position when the page is empty): a reader that keeps it
	// sees only later changes.
	Next uint64
	// HasMore is true when the feed holds changes after Next already.
	HasMore bool
}

// Changes returns up to limit change-feed entries after the sequence
// number after (0: from the beginning), oldest first. limit 0 means
// DefaultChangesLimit. A position before the feed's trimmed sequence is
// ErrCursorTooOld; from the beginning, the feed still holds the latest
// entry of every record (see Store.TrimFeed).
func (s *Service) Changes(ctx context.Context, after uint64, limit int) (ChangesPage, error) {
	if limit == 0 {
		limit = DefaultChangesLimit
	}
	if limit < 1 || limit > MaxChangesLimit {
		return ChangesPage{}, input.Errorf("limit", "must be an integer from 1 to %d", MaxChangesLimit)
	}
	st, err := s.store.Feed(ctx)
	if err != nil {
		return ChangesPage{}, fmt.Errorf("read the change feed's state: %w", err)
	}
	if after > st.Last {
		return ChangesPage{}, ErrCursorAhead
	}
	if after > 0 && after < st.Trimmed {
		return ChangesPage{}, ErrCursorTooOld
	}
	chs, err := s.store.Changes(ctx, after, limit+1)
	if err != nil {
		return ChangesPage{}, fmt.Errorf("read the change feed after %d: %w", after, err)
	}
	p := ChangesPage{Changes: chs, Next: after}
	if len(chs) > limit {
		p.Changes, p.HasMore = chs[:limit], true
	}
	if n := len(p.Changes); n > 0 {
		p.Next = p.Changes[n-1].Seq
	}
	return p, nil
}
