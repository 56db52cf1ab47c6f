package storage

import (
	"time"

	"github.com/kfa-project/kfa/changelog"
)

// Writes is a command's write plan: what its decision returned, as
// records, counters and events. The store writes it in the command's
// transaction, each record with its index entries, then the counters,
// then the events.
type Writes struct {
	Ops    []Op
	Events []changelog.Event
	// At is when the events were written (their written time).
	At time.Time
}

// Op is one write: a put (New set), a delete (New nil, Old set), or a
// counter's move (Counter set).
type Op struct {
	Type Type
	// Old is the record as the command loaded it (nil for a new one): the
	// store moves its index entries from Old's to New's.
	Old, New any
	Counter  string
	N        int64
}

// Put writes rec, a record of k that was old as the command loaded it
// (nil: a new record).
func Put[T any](w *Writes, k *Kind[T], old, rec *T) {
	op := Op{Type: k, New: rec}
	if old != nil {
		op.Old = old
	}
	w.Ops = append(w.Ops, op)
}

// Delete deletes old, a record of k as the command loaded it, with its
// index entries.
func Delete[T any](w *Writes, k *Kind[T], old *T) {
	w.Ops = append(w.Ops, Op{Type: k, Old: old})
}

// Add adds n to the counter name.
func (w *Writes) Add(name string, n int64) {
	w.Ops = append(w.Ops, Op{Counter: name, N: n})
}

// Log appends evs to the change log, written at at.
func (w *Writes) Log(at time.Time, evs ...changelog.Event) {
	w.Events = append(w.Events, evs...)
	w.At = at
}

// Empty reports whether w writes nothing.
func (w *Writes) Empty() bool { return w == nil || (len(w.Ops) == 0 && len(w.Events) == 0) }
