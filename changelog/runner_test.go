package changelog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// memLog is a Log in memory, with a wake-up and a settable trimmed point
// and hold.
type memLog struct {
	mu      sync.Mutex
	evs     []Event
	trimmed Position
	held    time.Time
	hide    uint64 // when not 0, the events from this seq on are held back (not read, Held set)
	wake    Signal
	reads   int
	failing error
}

func (l *memLog) append(ids ...string) Position {
	l.mu.Lock()
	for _, id := range ids {
		next := l.trimmed.Seq + 1
		if n := len(l.evs); n > 0 {
			next = l.evs[n-1].Pos.Seq + 1
		}
		l.evs = append(l.evs, Event{Pos: Position{Seq: next}, Kind: RecordUpserted, ID: id})
	}
	last := l.evs[len(l.evs)-1].Pos
	l.mu.Unlock()
	l.wake.Notify()
	return last
}

func (l *memLog) ReadLog(ctx context.Context, after Position, limit int) ([]Event, error) {
	t, err := l.ReadTail(ctx, after, limit)
	return t.Events, err
}

func (l *memLog) ReadTail(_ context.Context, after Position, limit int) (Tail, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	if l.failing != nil {
		return Tail{}, l.failing
	}
	t := Tail{Held: l.held, Trimmed: l.trimmed}
	for _, e := range l.evs {
		if e.Pos == after {
			t.At = e
		}
	}
	for _, e := range l.evs {
		if l.hide != 0 && e.Pos.Seq >= l.hide {
			if t.Held.IsZero() {
				t.Held = time.Now()
			}
			break
		}
		if after.Before(e.Pos) && l.trimmed.Before(e.Pos) && len(t.Events) < limit {
			t.Events = append(t.Events, e)
		}
	}
	return t, nil
}

func (l *memLog) LogState(context.Context) (State, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := State{Trimmed: l.trimmed, Epoch: "mem"}
	if n := len(l.evs); n > 0 {
		st.Last = l.evs[n-1].Pos
	}
	return st, nil
}

func (l *memLog) WakeLog() (<-chan struct{}, func()) { return l.wake.Subscribe() }

// recorder is a follower that records what it applied, and fails while
// fail is set.
type recorder struct {
	mu    sync.Mutex
	ids   []string
	fail  int // fail this many more Apply calls
	reset func(reason string) (Position, error)
}

func (r *recorder) Apply(_ context.Context, evs []Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return errors.New("apply failed")
	}
	for _, e := range evs {
		r.ids = append(r.ids, e.ID)
	}
	return nil
}

func (r *recorder) got() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.ids, ",")
}

type resettable struct{ *recorder }

func (r resettable) Reset(_ context.Context, reason string) (Position, error) { return r.reset(reason) }

func startRunner(t *testing.T, l Log, f Follower, o RunnerOptions) *Runner {
	t.Helper()
	r := NewRunner(l, f, o)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestRunnerFromHead: an in-memory follower sees exactly the events
// committed after Start returned, in order, each once, in bounded
// batches.
func TestRunnerFromHead(t *testing.T) {
	l := &memLog{}
	l.append("before-1", "before-2")
	rec := &recorder{}
	r := startRunner(t, l, rec, RunnerOptions{Name: "test", Batch: 2, Tick: time.Hour})
	var last Position
	for i := range 5 {
		last = l.append(fmt.Sprintf("e%d", i))
	}
	ctx := waitCtx(t)
	if err := r.WaitPast(ctx, last); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); got != "e0,e1,e2,e3,e4" {
		t.Fatalf("applied %s", got)
	}
	if r.Position() != last {
		t.Fatalf("position %v, want %v", r.Position(), last)
	}
}

// TestRunnerRetriesFailedApply: a batch whose Apply failed is applied
// again, and the runner is not caught up meanwhile.
func TestRunnerRetriesFailedApply(t *testing.T) {
	l := &memLog{}
	rec := &recorder{fail: 2}
	r := startRunner(t, l, rec, RunnerOptions{Name: "test", Tick: time.Millisecond})
	last := l.append("a", "b")
	if err := r.WaitPast(waitCtx(t), last); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); got != "a,b" {
		t.Fatalf("applied %s", got)
	}
}

// TestRunnerSyncAndCaughtUp: Sync returns once every event committed
// before it is applied; a read held back (PostgreSQL: an older
// transaction still running) keeps CaughtUp at the hold, so a cache
// trusting Fresh stops trusting itself.
func TestRunnerSyncAndCaughtUp(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	l := &memLog{}
	rec := &recorder{}
	r := startRunner(t, l, rec, RunnerOptions{Name: "test", Tick: time.Hour, Now: clock})
	l.append("a")
	ctx := waitCtx(t)
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if rec.got() != "a" || !r.Fresh(time.Second) {
		t.Fatalf("after Sync: applied %q, fresh %v", rec.got(), r.Fresh(time.Second))
	}
	advance(2 * time.Second)
	if r.Fresh(time.Second) {
		t.Fatal("fresh two seconds after the last read")
	}
	l.mu.Lock()
	l.held = clock().Add(-5 * time.Second)
	l.mu.Unlock()
	r.Poke()
	// Sync cannot return while the log is held before its call.
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := r.Sync(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sync with the log held: %v", err)
	}
	if r.Fresh(time.Second) {
		t.Fatal("fresh while the log is held back five seconds")
	}
	l.mu.Lock()
	l.held = time.Time{}
	l.mu.Unlock()
	if err := r.Sync(ctx); err != nil || !r.Fresh(time.Second) {
		t.Fatalf("after the hold ends: %v, fresh %v", err, r.Fresh(time.Second))
	}
}

// TestRunnerReset: a follower whose position the log was trimmed past
// rebuilds, and goes on from the position its rebuild stands for.
func TestRunnerReset(t *testing.T) {
	l := &memLog{}
	l.append("a", "b", "c")
	rec := &recorder{}
	var reason string
	rec.reset = func(r string) (Position, error) {
		reason = r
		return Position{Seq: 4}, nil
	}
	l.mu.Lock()
	l.trimmed = Position{Seq: 3}
	l.mu.Unlock()
	l.append("d", "e")
	r := startRunner(t, l, resettable{rec}, RunnerOptions{Name: "test", Tick: time.Hour,
		From: func(context.Context) (Position, error) { return Position{Seq: 1}, nil }})
	if err := r.WaitPast(waitCtx(t), Position{Seq: 5}); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); got != "e" || !strings.Contains(reason, "trimmed up to 3") {
		t.Fatalf("applied %q after a reset for %q", got, reason)
	}
}

// cursorLog is a memLog that keeps cursors.
type cursorLog struct {
	memLog
	mu    sync.Mutex
	saved map[string]Position
}

func (c *cursorLog) SaveCursor(_ context.Context, name string, pos Position, _ time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.saved[name] = pos
	return nil
}

func (c *cursorLog) ListCursors(context.Context) ([]Cursor, error) { return nil, nil }

// TestRunnerCursor: a durable follower's cursor is saved while it runs
// and at Stop; a stopped runner refuses to be waited on; Start and Stop
// twice are harmless.
func TestRunnerCursor(t *testing.T) {
	l := &cursorLog{saved: map[string]Position{}}
	rec := &recorder{}
	r := NewRunner(l, rec, RunnerOptions{Name: "idx", Cursors: l, Tick: time.Hour,
		From: func(context.Context) (Position, error) { return Position{}, nil }})
	if err := r.WaitPast(context.Background(), Position{Seq: 1}); !errors.Is(err, ErrStopped) {
		t.Fatalf("wait on a runner never started: %v", err)
	}
	ctx := waitCtx(t)
	for range 2 {
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	last := l.append("a", "b")
	if err := r.WaitPast(ctx, last); err != nil {
		t.Fatal(err)
	}
	r.Stop()
	r.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.saved["idx"] != last {
		t.Fatalf("saved cursor %v, want %v", l.saved["idx"], last)
	}
}

// TestFanout: each part applies each event once, even when another part
// failed and the batch comes again.
func TestFanout(t *testing.T) {
	ok, flaky := &recorder{}, &recorder{fail: 1}
	f := NewFanout(ok, flaky)
	evs := []Event{{Pos: Position{Seq: 1}, ID: "a"}, {Pos: Position{Seq: 2}, ID: "b"}}
	if err := f.Apply(context.Background(), evs); err == nil {
		t.Fatal("a failing part's error was lost")
	}
	if err := f.Apply(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if err := f.Apply(context.Background(), []Event{{Pos: Position{Seq: 3}, ID: "c"}}); err != nil {
		t.Fatal(err)
	}
	if ok.got() != "a,b,c" || flaky.got() != "a,b,c" {
		t.Fatalf("parts applied %q and %q", ok.got(), flaky.got())
	}
}

// trimCounter is a Trimmable that reports each call and can hold it.
type trimCounter struct {
	calls   chan time.Time
	release chan struct{}
}

func (c *trimCounter) TrimLog(ctx context.Context, before time.Time) (int, error) {
	c.calls <- before
	select {
	case <-c.release:
	case <-ctx.Done():
	}
	return 1, nil
}

// TestTrimmerStartStop: Start trims at once with the horizon behind the
// clock; a second Start does not start a second loop; Stop waits for the
// trim in progress; after Stop nothing trims.
func TestTrimmerStartStop(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := &trimCounter{calls: make(chan time.Time, 4), release: make(chan struct{})}
	tr := NewTrimmer(c, TrimmerOptions{Retention: 24 * time.Hour, Every: time.Hour, Now: func() time.Time { return now }})
	tr.Stop() // never started: nothing
	tr.Start(context.Background())
	tr.Start(context.Background())
	if before := <-c.calls; !before.Equal(now.Add(-24 * time.Hour)) {
		t.Fatalf("trimmed before %v, want the horizon %v", before, now.Add(-24*time.Hour))
	}
	stopped := make(chan struct{})
	go func() { tr.Stop(); close(stopped) }()
	// Stop cancels the trim's context; the trim ends and Stop returns.
	<-stopped
	tr.Stop()
	select {
	case b := <-c.calls:
		t.Fatalf("a second trim (before %v): two loops ran, or one ran after Stop", b)
	default:
	}
}

// countingFollower counts its batches.
type countingFollower struct {
	mu      sync.Mutex
	batches int
	events  int
}

func (c *countingFollower) Apply(_ context.Context, evs []Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches++
	c.events += len(evs)
	return nil
}

// TestRunnerGap: wake-ups that come sooner than the gap after a pass
// wait, and their events are applied together in fewer batches.
func TestRunnerGap(t *testing.T) {
	l := &memLog{}
	c := &countingFollower{}
	r := startRunner(t, l, c, RunnerOptions{Name: "test", Tick: time.Hour, Gap: time.Hour})
	ctx := waitCtx(t)
	// The first pass, then the gap begins. (Not Sync: it waits for a pass
	// begun after the call, and the first may have begun before it.)
	if err := r.wait(ctx, func() bool { return r.complete >= 1 }); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		l.append(fmt.Sprintf("e%d", i))
	}
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := r.WaitPast(sctx, Position{Seq: 1}); err == nil {
		t.Fatal("a pass ran within the gap")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events != 0 {
		t.Fatalf("%d events applied within the gap", c.events)
	}
}

// TestRunnerGapBatches: events appended one by one within the gap are
// applied in one or two batches, not one each.
func TestRunnerGapBatches(t *testing.T) {
	l := &memLog{}
	c := &countingFollower{}
	r := startRunner(t, l, c, RunnerOptions{Name: "test", Tick: time.Hour, Gap: 300 * time.Millisecond})
	ctx := waitCtx(t)
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var last Position
	for i := range 20 {
		last = l.append(fmt.Sprintf("e%d", i))
	}
	if err := r.WaitPast(ctx, last); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events != 20 || c.batches > 2 {
		t.Fatalf("%d events in %d batches, want the 20 in one or two", c.events, c.batches)
	}
}

// TestRunnerReadsHeldEventsAgain: a pass woken by an event it finds held
// back (PostgreSQL: an older transaction still runs) reads again soon on
// its own, without another wake-up and long before its tick, and applies
// the event once it is readable.
func TestRunnerReadsHeldEventsAgain(t *testing.T) {
	l := &memLog{}
	rec := &recorder{}
	r := startRunner(t, l, rec, RunnerOptions{Name: "test", Tick: time.Hour})
	ctx := waitCtx(t) // a guard, not a measure: the tick is an hour
	if err := r.wait(ctx, func() bool { return r.complete >= 1 }); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.hide = 1
	l.mu.Unlock()
	pos := l.append("a") // wakes the runner, which finds "a" held back
	if err := r.wait(ctx, func() bool { return r.complete >= 2 && !r.held.IsZero() }); err != nil {
		t.Fatal(err)
	}
	if rec.got() != "" {
		t.Fatalf("applied %q while it was held back", rec.got())
	}
	l.mu.Lock()
	l.hide = 0 // readable now, and nothing wakes the runner
	l.mu.Unlock()
	if err := r.WaitPast(ctx, pos); err != nil {
		t.Fatalf("the held event was not read again: %v", err)
	}
	if rec.got() != "a" {
		t.Fatalf("applied %q, want a", rec.got())
	}
}
