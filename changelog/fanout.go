package changelog

import (
	"context"
	"errors"
)

// Fanout is one Follower made of several, so that the in-memory
// followers of a process (streams, metrics, credential cache, push
// wake-up) share one read of the log. Each part keeps the position it
// has applied: when one part fails, the runner hands the batch again and
// only the parts that failed apply it, so no part counts an event twice.
type Fanout struct {
	parts []Follower
	at    []Position // guarded by the runner: Apply is never called concurrently
}

// NewFanout returns a Follower that applies each batch to every part, in
// order.
func NewFanout(parts ...Follower) *Fanout {
	return &Fanout{parts: parts, at: make([]Position, len(parts))}
}

// Apply implements Follower.
func (f *Fanout) Apply(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	var errs []error
	for i, p := range f.parts {
		todo := evs
		for len(todo) > 0 && !f.at[i].Before(todo[0].Pos) {
			todo = todo[1:]
		}
		if len(todo) == 0 {
			continue
		}
		if err := p.Apply(ctx, todo); err != nil {
			errs = append(errs, err)
			continue
		}
		f.at[i] = todo[len(todo)-1].Pos
	}
	return errors.Join(errs...)
}

// Forget implements Forgetter: every part that can forget does, and the
// parts' positions start over, since the runner goes on from a position
// that may be behind them.
func (f *Fanout) Forget(ctx context.Context) {
	for i, p := range f.parts {
		f.at[i] = Position{}
		if fg, ok := p.(Forgetter); ok {
			fg.Forget(ctx)
		}
	}
}
