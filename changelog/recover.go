package changelog

// How a Runner recovers when the log lost its position (trimmed past
// it, or a failover that lost events): rebuild, or forget and go on.

import (
	"context"
	"fmt"
)

// reset handles a position the log was trimmed past: the follower
// rebuilds when it can, otherwise it goes on from the trimmed point, and
// either way the log says so.
func (r *Runner) reset(ctx context.Context, pos, trimmed Position) (Position, error) {
	reason := fmt.Sprintf("the log was trimmed up to %s, past this follower's position %s "+
		"(it was stopped longer than the retention horizon)", trimmed, pos)
	rs, ok := r.f.(Resetter)
	if !ok {
		r.o.Log.Warn("a change log follower missed events; it goes on after them", "follower", r.o.Name, "reason", reason)
		pos = trimmed
	} else {
		r.o.Log.Warn("a change log follower missed events; rebuilding it", "follower", r.o.Name, "reason", reason)
		p, err := rs.Reset(ctx, reason)
		if err != nil {
			return pos, fmt.Errorf("rebuild after missed events: %w", err)
		}
		pos = p
	}
	r.mu.Lock()
	r.pos, r.last = pos, Event{}
	r.mu.Unlock()
	return pos, nil
}

// lostAt tells whether the log lost the event at pos, which the follower
// had applied (Tail.At): none is there, though trimming did not remove it,
// or another one is (another transaction took its position).
func (r *Runner) lostAt(pos Position, t Tail) bool {
	if pos.IsZero() || !t.Trimmed.Before(pos) {
		return false
	}
	if t.At.Pos != pos {
		return true
	}
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	return last.Pos == pos && (last.Kind != t.At.Kind || last.ID != t.At.ID)
}

// Forgetter is a Follower that keeps something of the events it applied
// and can drop it (the credential cache drops every credential). When the
// log lost events a follower had applied (Tail.At), a Resetter rebuilds;
// any other follower is told to Forget, if it can, and goes on from the
// log's head.
type Forgetter interface {
	Forget(ctx context.Context)
}

// lost handles a log that lost events the follower had applied (see
// Tail.At). The loss is logged as an error: acknowledged writes are gone,
// and the follower's events after it are in doubt. A follower that can
// rebuild does, so that nothing of the lost events stays in it; any other
// forgets what it can and goes on from the log's head: the new events'
// positions may be behind its own.
func (r *Runner) lost(ctx context.Context, pos Position) (Position, error) {
	reason := fmt.Sprintf("the event at %s, which this follower had applied, is no longer in the log, which was not "+
		"trimmed there: the database lost committed writes (a failover to a standby that had not received them)", pos)
	if rs, ok := r.f.(Resetter); ok {
		r.o.Log.Error("the database lost events; rebuilding this follower", "follower", r.o.Name, "reason", reason)
		p, err := rs.Reset(ctx, reason)
		if err != nil {
			return pos, fmt.Errorf("rebuild after lost events: %w", err)
		}
		pos = p
	} else {
		st, err := r.log.LogState(ctx)
		if err != nil {
			return pos, fmt.Errorf("find the log's head after lost events: %w", err)
		}
		r.o.Log.Error("the database lost events; this follower goes on from the log's head", "follower", r.o.Name,
			"reason", reason, "head", st.Last.String())
		if fg, ok := r.f.(Forgetter); ok {
			fg.Forget(ctx)
		}
		pos = st.Last
	}
	r.mu.Lock()
	r.pos, r.last = pos, Event{}
	r.mu.Unlock()
	return pos, nil
}
