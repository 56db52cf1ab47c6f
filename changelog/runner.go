package changelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Follower applies the log's events: the search index, the stream
// broker, the metrics, the credential cache.
type Follower interface {
	// Apply applies evs, oldest first. When it fails the runner hands the
	// same events again later; a process that stops between applying and
	// recording its position hands them again at its next start. A
	// follower whose output is durable therefore applies idempotently.
	Apply(ctx context.Context, evs []Event) error
}

// FollowerFunc is a function that is a Follower.
type FollowerFunc func(ctx context.Context, evs []Event) error

// Apply implements Follower.
func (f FollowerFunc) Apply(ctx context.Context, evs []Event) error { return f(ctx, evs) }

// Resetter is a Follower that can start over when the log no longer
// holds the events after its position (trimming removed them).
type Resetter interface {
	// Reset rebuilds the follower's state from the store and returns the
	// position that state stands for.
	Reset(ctx context.Context, reason string) (Position, error)
}

// Defaults of RunnerOptions.
const (
	// DefaultTick is how often a runner reads the log without a wake-up:
	// the safety net for a lost wake-up (a NOTIFY sent while the listener
	// was reconnecting), and what keeps CaughtUp recent while nothing is
	// written.
	DefaultTick = 250 * time.Millisecond
	// DefaultBatch is how many events one read returns at most.
	DefaultBatch = 512
	// DefaultCursorEvery is how often a durable cursor is saved while the
	// follower moves or stays caught up.
	DefaultCursorEvery = 30 * time.Second
	// maxBackoff bounds the wait between two failed passes.
	maxBackoff = 5 * time.Second
	// heldAgainMin is how soon a runner reads again after a pass that
	// found events committed but held back (PostgreSQL: a transaction
	// older than them still runs, anywhere on the cluster); it doubles
	// while they stay held, up to the tick and to DefaultTick.
	heldAgainMin = 5 * time.Millisecond
)

// RunnerOptions configure NewRunner.
type RunnerOptions struct {
	// Name names the follower in the log lines and, with Cursors, its
	// durable cursor.
	Name string
	// From returns the position to follow from. Nil: the log's head when
	// Start runs (an in-memory follower, which sees every event committed
	// after Start returns).
	From func(ctx context.Context) (Position, error)
	// Cursors, when set, keeps the follower's position under Name, so
	// that trimming waits for it; saved every CursorEvery while it moves
	// or is caught up, never while it fails (a stuck follower stops
	// holding the log back once the horizon passes).
	Cursors Cursors
	// CursorEvery: default DefaultCursorEvery.
	CursorEvery time.Duration
	// Tick: default DefaultTick.
	Tick time.Duration
	// Batch: default DefaultBatch.
	Batch int
	// Gap is the least time between the starts of two passes (0: none):
	// wake-ups that come sooner wait, and their events are applied
	// together. A follower whose every pass has a fixed cost (the search
	// index makes a segment per batch, and merges them later) trades a
	// little latency for fewer, larger batches under load.
	Gap time.Duration
	// Now is the clock of CaughtUp and of the cursor's update time.
	// Default time.Now.
	Now func() time.Time
	// Log receives failures and resets. Default: discarded.
	Log *slog.Logger
}

// Runner runs one Follower over a Log: it reads the events after the
// follower's position in bounded batches and applies them, when the log
// wakes it, every Tick in any case, and soon again after a read that
// found events held back (Tail.Held). Start and Stop run it in the
// background; WaitPast and Sync wait for it.
type Runner struct {
	log Log
	f   Follower
	o   RunnerOptions

	mu       sync.Mutex
	pos      Position
	caughtUp time.Time     // every event committed before it has been applied
	passes   uint64        // passes begun
	complete uint64        // the last pass that ended having read everything readable
	held     time.Time     // that pass's Tail.Held
	moved    chan struct{} // closed and replaced after each pass
	poke     chan struct{} // asks for a pass now (capacity 1)
	cancel   context.CancelFunc
	done     chan struct{}
	started  bool
	saved    time.Time // when the durable cursor was last saved
	savedPos Position
	// last is the event at pos when the runner applied it (zero Pos: the
	// runner started or reset there, and knows only the position).
	last Event
}

// ErrStopped is returned by the waits of a Runner that is not running.
var ErrStopped = errors.New("changelog: the follower is not running")

// NewRunner returns a stopped runner of f over l.
func NewRunner(l Log, f Follower, o RunnerOptions) *Runner {
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.CursorEvery <= 0 {
		o.CursorEvery = DefaultCursorEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Runner{log: l, f: f, o: o, moved: make(chan struct{}), poke: make(chan struct{}, 1)}
}

// Start finds the position to follow from (Options.From, or the log's
// head) and runs the follower until ctx ends or Stop. It returns once the
// position is known: every event committed after Start returns reaches
// the follower. A second Start while running does nothing.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return nil
	}
	var pos Position
	if r.o.From != nil {
		p, err := r.o.From(ctx)
		if err != nil {
			return fmt.Errorf("changelog: start %s: %w", r.o.Name, err)
		}
		pos = p
	} else {
		st, err := r.log.LogState(ctx)
		if err != nil {
			return fmt.Errorf("changelog: start %s at the head of the log: %w", r.o.Name, err)
		}
		pos = st.Last
	}
	r.pos, r.started = pos, true
	if r.o.Cursors != nil {
		// A follower that starts where its cursor is, or with none, saves
		// it only once it moves or has run a while: a server started and
		// stopped without new events writes nothing. (Trimming only takes
		// events older than the horizon, and one at the head has passed
		// them all.)
		r.saved, r.savedPos = r.o.Now(), pos
		cs, err := r.o.Cursors.ListCursors(ctx)
		if err != nil {
			return fmt.Errorf("changelog: start %s: read its cursor: %w", r.o.Name, err)
		}
		for _, c := range cs {
			if c.Name == r.o.Name && c.Pos != pos {
				r.saved, r.savedPos = c.Updated, c.Pos
			}
		}
	}
	wake, stop := r.log.WakeLog()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel, r.done = cancel, make(chan struct{})
	go r.run(ctx, wake, stop, r.done)
	return nil
}

// Stop ends the follower and waits for its pass to finish, then saves
// its durable cursor. Stopping a stopped runner does nothing.
func (r *Runner) Stop() {
	r.mu.Lock()
	if !r.started {
		r.mu.Unlock()
		return
	}
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	cancel()
	<-done
	r.mu.Lock()
	r.started = false
	close(r.moved) // wakes the waiters, which see it stopped
	r.moved = make(chan struct{})
	pos := r.pos
	r.mu.Unlock()
	if r.o.Cursors != nil && pos != r.savedPos {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.o.Cursors.SaveCursor(ctx, r.o.Name, pos, r.o.Now()); err != nil {
			r.o.Log.Warn("saving the follower's cursor at stop failed", "follower", r.o.Name, "err", err.Error())
		}
	}
}

// Position is the position after the last event applied.
func (r *Runner) Position() Position {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pos
}

// CaughtUp is the time before which every committed event has been
// applied (zero before the first pass ends). A cache that the follower
// keeps true trusts itself only while it is recent.
func (r *Runner) CaughtUp() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.caughtUp
}

// Fresh reports whether the follower has applied every event committed
// more than within ago.
func (r *Runner) Fresh(within time.Duration) bool {
	c := r.CaughtUp()
	return !c.IsZero() && r.o.Now().Sub(c) <= within
}

// Poke asks for a pass now.
func (r *Runner) Poke() {
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// WaitPast returns once the follower has applied the event at p (or
// after it), ctx ends, or the runner stops.
func (r *Runner) WaitPast(ctx context.Context, p Position) error {
	return r.wait(ctx, func() bool { return !r.pos.Before(p) })
}

// Sync returns once every event committed before it was called has been
// applied, ctx ends, or the runner stops: an operator's import is
// searchable when the command that made it returns.
func (r *Runner) Sync(ctx context.Context) error {
	r.mu.Lock()
	since, begun := r.o.Now(), r.passes
	r.mu.Unlock()
	r.Poke()
	// A pass begun after the call read everything committed before it,
	// unless the log held some back (PostgreSQL) from before the call.
	return r.wait(ctx, func() bool { return r.complete > begun && (r.held.IsZero() || !r.held.Before(since)) })
}

// wait waits until done (called with mu held) holds.
func (r *Runner) wait(ctx context.Context, done func() bool) error {
	for {
		r.mu.Lock()
		ok, running, moved := done(), r.started, r.moved
		r.mu.Unlock()
		if ok {
			return nil
		}
		if !running {
			return ErrStopped
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *Runner) run(ctx context.Context, wake <-chan struct{}, stopWake func(), done chan<- struct{}) {
	defer close(done)
	defer stopWake()
	tick := time.NewTicker(r.o.Tick)
	defer tick.Stop()
	failures := 0
	var heldAgain time.Duration // the wait before reading held events again; 0 while none are
	for {
		began := time.Now()
		err := r.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		var retry <-chan time.Time
		if err != nil {
			failures++
			backoff := min(r.o.Tick<<min(failures, 8), maxBackoff)
			r.o.Log.Error("a change log follower failed; retrying", "follower", r.o.Name, "err", err.Error(),
				"failures", failures, "retry_in", backoff)
			retry = time.After(backoff)
		} else {
			failures = 0
			r.saveCursor(ctx)
		}
		r.broadcast()
		if retry != nil {
			select {
			case <-ctx.Done():
				return
			case <-retry:
			}
			continue
		}
		// Events held back become readable when the transactions older
		// than them end, which wakes no one: the wake-up that announced
		// them has been spent on this pass, so read again soon rather
		// than at the next tick.
		var again <-chan time.Time
		if r.heldBack() {
			heldAgain = min(max(2*heldAgain, heldAgainMin), r.o.Tick, DefaultTick)
			again = time.After(heldAgain)
		} else {
			heldAgain = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-r.poke:
		case <-tick.C:
		case <-again:
		}
		if wait := r.o.Gap - time.Since(began); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// heldBack reports whether the last complete pass found events that
// committed but were not readable yet.
func (r *Runner) heldBack() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.held.IsZero()
}

// broadcast wakes the waiters.
func (r *Runner) broadcast() {
	r.mu.Lock()
	close(r.moved)
	r.moved = make(chan struct{})
	r.mu.Unlock()
}

// pass applies every event readable now, a batch at a time.
func (r *Runner) pass(ctx context.Context) error {
	r.mu.Lock()
	r.passes++
	pass, pos := r.passes, r.pos
	r.mu.Unlock()
	for {
		start := r.o.Now()
		tail, err := r.log.ReadTail(ctx, pos, r.o.Batch)
		if err != nil {
			return fmt.Errorf("read the log after %s: %w", pos, err)
		}
		if r.lostAt(pos, tail) {
			if pos, err = r.lost(ctx, pos); err != nil {
				return err
			}
			continue
		}
		if pos.Before(tail.Trimmed) {
			if pos, err = r.reset(ctx, pos, tail.Trimmed); err != nil {
				return err
			}
			continue
		}
		if n := len(tail.Events); n > 0 {
			if err := r.f.Apply(ctx, tail.Events); err != nil {
				return fmt.Errorf("apply the events %s to %s: %w", tail.Events[0].Pos, tail.Events[n-1].Pos, err)
			}
			pos = tail.Events[n-1].Pos
			r.mu.Lock()
			r.pos, r.last = pos, tail.Events[n-1]
			r.mu.Unlock()
		}
		if len(tail.Events) < r.o.Batch {
			complete := start
			if !tail.Held.IsZero() && tail.Held.Before(complete) {
				complete = tail.Held
			}
			r.mu.Lock()
			if complete.After(r.caughtUp) {
				r.caughtUp = complete
			}
			r.complete, r.held = pass, tail.Held
			r.mu.Unlock()
			return nil
		}
	}
}

// saveCursor saves the durable cursor when it is due.
func (r *Runner) saveCursor(ctx context.Context) {
	if r.o.Cursors == nil {
		return
	}
	now := r.o.Now()
	if now.Sub(r.saved) < r.o.CursorEvery {
		return
	}
	pos := r.Position()
	if pos == r.savedPos && now.Sub(r.saved) < 2*r.o.CursorEvery {
		return // saved at this position lately: still live
	}
	if err := r.o.Cursors.SaveCursor(ctx, r.o.Name, pos, now); err != nil {
		if ctx.Err() == nil {
			r.o.Log.Warn("saving a change log follower's cursor failed; retrying later", "follower", r.o.Name, "err", err.Error())
		}
		return
	}
	r.saved, r.savedPos = now, pos
}
