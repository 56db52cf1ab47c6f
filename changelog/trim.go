package changelog

import "time"

// The trimming policy, as pure decisions: which cursors still hold the
// log back, how far a trim may reach, and which events it removes. A
// store walks its log and removes what these say; it decides none of it.

// StaleCursor reports whether c holds nothing back any more: a durable
// follower that has not saved its position since horizon is gone (a
// later start rebuilds it), and its cursor is deleted.
func StaleCursor(c Cursor, horizon time.Time) bool { return c.Updated.Before(horizon) }

// Bound is how far a trim may reach: never the log's newest event (it
// says where the log stands), and never past a live cursor.
type Bound struct {
	// Newest is the log's newest event (zero: the log is empty).
	Newest Position
	// Cursor is the slowest live cursor; set only when there is one.
	Cursor    Position
	HasCursor bool
}

// Allows reports whether the event at p may be removed as far as the
// bound goes.
func (b Bound) Allows(p Position) bool {
	return p.Before(b.Newest) && (!b.HasCursor || !b.Cursor.Before(p))
}

// TrimBound is the bound of a trim at horizon over a log whose newest
// event is at newest, and the cursors that are stale.
func TrimBound(cursors []Cursor, newest Position, horizon time.Time) (Bound, []string) {
	b := Bound{Newest: newest}
	var stale []string
	for _, c := range cursors {
		if StaleCursor(c, horizon) {
			stale = append(stale, c.Name)
			continue
		}
		if !b.HasCursor || c.Pos.Before(b.Cursor) {
			b.Cursor, b.HasCursor = c.Pos, true
		}
	}
	return b, stale
}

// TrimStep is the policy of the walk of the log, oldest first, from where
// the last walk stopped: it stops at the first event the bound keeps or
// that was written at or after horizon, and it removes each event before
// that which is not a record's (the records' events are the feed's, and
// RecordDroppable says which of those go).
func TrimStep(e Event, written time.Time, b Bound, horizon time.Time) (stop, drop bool) {
	if !b.Allows(e.Pos) || !written.Before(horizon) {
		return true, false
	}
	return false, !e.Kind.IsRecord()
}

// RecordDroppable reports whether a record's event is one a reader of
// the records' feed starting over does not need: a deletion, or an event
// whose record has a later one (superseded).
func RecordDroppable(k Kind, superseded bool) bool { return k == RecordDeleted || superseded }

// KeepRecordEvent is the policy of the walk of the records' droppable
// events: one stays when the bound keeps it, when it is the newest
// record event (the feed's newest stays), or when it was written at or
// after horizon; the others go. A walk in writing order (bbolt's single
// writer) may stop at the first that stays.
func KeepRecordEvent(e Event, written time.Time, newestRecord Position, b Bound, horizon time.Time) bool {
	return !b.Allows(e.Pos) || !e.Pos.Before(newestRecord) || !written.Before(horizon)
}
