package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfa-project/kfa/push"
)

// Signer signs the claims of a request (signing.Signer is one).
type Signer interface {
	SignJSON(ctx context.Context, claims any) (string, error)
}

// Observer hears of every recorded attempt (the metrics).
type Observer interface {
	Attempted(d push.Delivery, a push.Attempt)
}

// Claims are the claims of KFA-Signature.
type Claims struct {
	IssuedAt   int64  `json:"iat"`
	JTI        string `json:"jti"` // the delivery id: the same on every attempt
	TaskID     string `json:"taskId"`
	BodySHA256 string `json:"bodySha256"` // lower-case hex SHA-256 of the request body
}

// Defaults of Config.
const (
	DefaultConcurrency = 8
	DefaultKeep        = 7 * 24 * time.Hour
	DefaultRecordRetry = 100 * time.Millisecond
	// perRunner bounds the deliveries one runner takes, so that a busy
	// destination hands the others (and, on a shared outbox, the other
	// processes) their turn between its runs.
	perRunner  = 64
	purgeEvery = 10 * time.Minute
	purgeBatch = 1000
	// idleCheck bounds how long the worker sleeps without looking at the
	// outbox: a delivery made due by another process (or an operator's
	// retry on the file) is picked up within it.
	idleCheck = 5 * time.Second
	// blockedPoll is how long the worker waits, when a delivery is due
	// that it did not start, before it looks again: its destination is
	// busy here (the runner's end wakes the worker sooner) or another
	// process holds it.
	blockedPoll = 250 * time.Millisecond
	// recordRetryCap bounds the wait between two tries at recording one
	// attempt.
	recordRetryCap = 2 * time.Second
	// recordTimeout bounds one try at recording an attempt; it runs on
	// when the worker stops, so an attempt made is recorded if it can be.
	recordTimeout = 10 * time.Second
	// claimMargin is how long a claim (push.Claimer) outlasts the request
	// it is for: the time its attempt has to be recorded, across a
	// failover, before another sender may send the delivery again.
	claimMargin = 5 * time.Second
)

// Config tunes a Worker.
type Config struct {
	// Concurrency bounds the destinations sent to at once, which is the
	// requests in flight (one per destination). Default 8.
	Concurrency int
	// Retry is the retry schedule and period.
	Retry push.RetryPolicy
	// Keep is how long delivered and failed deliveries are kept before
	// they are purged. Default 7 days.
	Keep time.Duration
	// RecordRetry is the first wait before the worker tries again to
	// record an attempt the store failed to record; each later wait
	// doubles, up to 2s (within a claim's margin: see push.Claimer). The
	// delivery is not sent again meanwhile.
	// Default 100ms.
	RecordRetry time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// After waits for a duration (the record retries); default
	// time.After.
	After func(time.Duration) <-chan time.Time
	// Jitter returns a number in [0, max); default math/rand/v2.
	Jitter func(max int64) int64
	// Observer, when set, hears of every attempt.
	Observer Observer
	Log      *slog.Logger
}

// Worker sends the outbox's due deliveries: one runner per destination
// at a time, at most Concurrency runners, each sending its destination's
// due deliveries one after the other, in due order. Destinations take
// their turns round-robin, so a destination with a flood of deliveries
// delays no other. Over an outbox several processes send from
// (push.DestinationLocker), a runner holds its destination's lock, so one
// destination has one request in flight across all of them. Start it
// once; Stop it before closing the store.
type Worker struct {
	store  push.OutboxStore
	signer Signer
	sender *Sender
	cfg    Config

	kick chan struct{}

	// cursor is the destination the last walk stopped at; only the loop
	// uses it.
	cursor string
	// locks are the destination locks of a shared outbox, opened by the
	// loop; nil until then, and for an outbox of one process.
	locks push.DestinationLocks

	mu     sync.Mutex
	busy   map[string]bool // destinations with a runner
	cancel context.CancelFunc
	done   chan struct{}
	runs   sync.WaitGroup
	once   sync.Once
}

// NewWorker returns a Worker over store.
func NewWorker(store push.OutboxStore, signer Signer, sender *Sender, cfg Config) *Worker {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.RecordRetry <= 0 {
		cfg.RecordRetry = DefaultRecordRetry
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func(n int64) int64 { return rand.Int64N(n) }
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Retry = cfg.Retry.WithDefaults()
	return &Worker{store: store, signer: signer, sender: sender, cfg: cfg, kick: make(chan struct{}, 1),
		busy: map[string]bool{}}
}

// Kick tells the worker that deliveries may have become due (a
// transition committed). It never blocks.
func (w *Worker) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Start runs the worker in the background until Stop.
func (w *Worker) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	w.mu.Lock()
	w.cancel, w.done = cancel, make(chan struct{})
	w.mu.Unlock()
	go w.loop(ctx)
}

// Stop ends the worker: requests in flight are cut off and stay pending
// (they are sent again after a restart), and so do attempts whose record
// the store keeps refusing. It returns once nothing runs, and is safe to
// call twice, or without Start.
func (w *Worker) Stop() {
	w.once.Do(func() {
		w.mu.Lock()
		cancel, done := w.cancel, w.done
		w.mu.Unlock()
		if cancel == nil {
			return
		}
		cancel()
		<-done
		w.runs.Wait()
		if w.locks != nil {
			if err := w.locks.Close(); err != nil {
				w.cfg.Log.Warn("push: close the destination locks", "err", err)
			}
		}
		w.sender.Close()
	})
}

func (w *Worker) loop(ctx context.Context) {
	defer close(w.done)
	lastPurge := time.Time{}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		if now := w.cfg.Now(); now.Sub(lastPurge) >= purgeEvery {
			w.purge(ctx, now)
			lastPurge = now
		}
		w.dispatch(ctx)
		timer.Reset(w.wait(ctx))
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// wait is how long the loop sleeps: until the earliest delivery is due,
// at most idleCheck; blockedPoll when one is due already (this dispatch
// left it: its destination is busy here or locked by another process).
func (w *Worker) wait(ctx context.Context) time.Duration {
	at, ok, err := w.store.NextDue(ctx)
	if err != nil || !ok {
		return idleCheck
	}
	d := at.Sub(w.cfg.Now())
	if d <= 0 {
		d = blockedPoll
	}
	return min(d, idleCheck)
}

// dispatch starts a runner for each destination the walk finds due and
// not busy here, as many as Concurrency allows, going on round-robin from
// where the last walk stopped.
func (w *Worker) dispatch(ctx context.Context) {
	if !w.openLocks(ctx) {
		return
	}
	w.mu.Lock()
	free := w.cfg.Concurrency - len(w.busy)
	skip := make([]string, 0, len(w.busy))
	for d := range w.busy {
		skip = append(skip, d)
	}
	w.mu.Unlock()
	if free <= 0 {
		return
	}
	now := w.cfg.Now()
	dests, next, err := w.store.DueDestinations(ctx, push.DueQuery{Now: now, After: w.cursor, Limit: free, Skip: skip})
	if err == nil && next == "" && w.cursor != "" && len(dests) < free {
		// The walk reached the last destination: go on from the first.
		var more []string
		more, next, err = w.store.DueDestinations(ctx, push.DueQuery{Now: now, Limit: free - len(dests), Skip: append(skip, dests...)})
		dests = append(dests, more...)
	}
	if err != nil {
		if ctx.Err() == nil {
			w.cfg.Log.Error("push: read the outbox", "err", err)
		}
		return
	}
	w.cursor = next
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, dest := range dests {
		if ctx.Err() != nil {
			return
		}
		w.busy[dest] = true
		w.runs.Add(1)
		go w.run(ctx, dest)
	}
}

// openLocks opens the destination locks of a shared outbox, once; false
// when they are needed and could not be opened (nothing is sent then).
func (w *Worker) openLocks(ctx context.Context) bool {
	locker, shared := w.store.(push.DestinationLocker)
	if !shared || w.locks != nil {
		return true
	}
	locks, err := locker.DestinationLocks(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.cfg.Log.Error("push: open the destination locks", "err", err)
		}
		return false
	}
	w.mu.Lock()
	w.locks = locks
	w.mu.Unlock()
	return true
}

// run sends dest's due deliveries, one after the other, holding dest's
// lock on a shared outbox. It reads them once it holds dest (here, and
// on a shared outbox its lock), so it never sends an attempt another
// runner has made and recorded. Each outcome is recorded in the
// background (group commit puts many records in one transaction); dest
// is released once all of them have committed, so no runner, here or in
// another process, reads a sent delivery as still due.
func (w *Worker) run(ctx context.Context, dest string) {
	sent := false
	defer func() {
		w.mu.Lock()
		delete(w.busy, dest)
		w.mu.Unlock()
		w.runs.Done()
		if sent {
			w.Kick() // more may be due
		}
	}()
	if w.locks != nil {
		ok, err := w.locks.TryLock(ctx, dest)
		if err != nil && ctx.Err() == nil {
			w.cfg.Log.Error("push: lock a destination", "destination", dest, "err", err)
		}
		if !ok {
			return // another process sends to it
		}
		defer func() {
			if ctx.Err() != nil {
				return // stopping: closing the locks releases them all
			}
			if err := w.locks.Unlock(ctx, dest); err != nil {
				w.cfg.Log.Warn("push: unlock a destination", "destination", dest, "err", err)
			}
		}()
	}
	list, err := w.store.DueDeliveries(ctx, dest, w.cfg.Now(), perRunner)
	if err != nil {
		if ctx.Err() == nil {
			w.cfg.Log.Error("push: read the outbox", "destination", dest, "err", err)
		}
		return
	}
	var (
		records sync.WaitGroup
		failing atomic.Bool // a record failed: send no more until it is in
	)
	defer records.Wait()
	claimer, _ := w.store.(push.Claimer)
	for _, d := range list {
		if ctx.Err() != nil || failing.Load() || (w.locks != nil && !w.locks.Held(dest)) {
			return
		}
		if claimer != nil {
			now := w.cfg.Now()
			ok, err := claimer.Claim(ctx, d.ID, now, now.Add(w.sender.cfg.Timeout+claimMargin))
			if err != nil {
				if ctx.Err() == nil {
					w.cfg.Log.Error("push: claim a delivery", "delivery", d.ID, "destination", dest, "err", err)
				}
				return
			}
			if !ok {
				continue // recorded or claimed meanwhile: not ours to send
			}
		}
		a, ok := w.attempt(ctx, d)
		if !ok {
			return // stopping: the delivery stays pending and is sent again
		}
		sent = true
		records.Add(1)
		go func() {
			defer records.Done()
			w.record(ctx, d, a, &failing)
		}()
	}
}

// attempt sends d once and decides what came of it; ok is false when the
// worker is stopping and the attempt is not to be recorded.
func (w *Worker) attempt(ctx context.Context, d push.Delivery) (push.Attempt, bool) {
	cfg, err := w.store.PushConfig(ctx, d.TaskID, d.ConfigID)
	var resp push.Response
	var took time.Duration
	switch {
	case errors.Is(err, push.ErrNotFound):
		resp = push.Response{Err: errors.New("the config was deleted"), Refused: true}
	case err != nil:
		resp = push.Response{Err: errors.New("the config could not be read")}
		w.cfg.Log.Error("push: read config", "delivery", d.ID, "err", err)
	default:
		sum := sha256.Sum256(d.Event)
		sig, err := w.signer.SignJSON(ctx, Claims{IssuedAt: w.cfg.Now().Unix(), JTI: d.ID, TaskID: d.TaskID,
			BodySHA256: hex.EncodeToString(sum[:])})
		if err != nil {
			resp = push.Response{Err: errors.New("the request could not be signed")}
			w.cfg.Log.Error("push: sign", "delivery", d.ID, "err", err)
			break
		}
		start := time.Now()
		resp = w.sender.Send(ctx, Request{Config: cfg, Body: d.Event, Signature: sig})
		took = time.Since(start)
	}
	if ctx.Err() != nil {
		return push.Attempt{}, false
	}
	return w.cfg.Retry.Decide(resp, d.Attempts+1, d.RetryFrom(), w.cfg.Now(), took, w.cfg.Jitter), true
}

// record stores attempt a of d. When the store fails to, it tries again
// after a growing wait, and never sends d again meanwhile: the attempt
// was made, only its record is missing. Until it is in, the runner holds
// d's destination, so nothing reads d as due. If the worker stops first,
// d stays pending and is sent again after a restart (at least once).
func (w *Worker) record(ctx context.Context, d push.Delivery, a push.Attempt, failing *atomic.Bool) {
	gap := w.cfg.RecordRetry
	for try := 1; ; try++ {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		rec, err := w.store.RecordAttempt(rctx, d.ID, a)
		cancel()
		if errors.Is(err, push.ErrNotPending) {
			return // its config was deleted meanwhile, which failed it
		}
		if err == nil {
			w.recorded(d, rec, a)
			return
		}
		failing.Store(true)
		w.cfg.Log.Error("push: record an attempt; trying again, without sending again", "delivery", d.ID,
			"destination", d.Destination, "try", try, "wait", gap, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-w.cfg.After(gap):
		}
		gap = min(2*gap, recordRetryCap)
	}
}

// recorded reports attempt a of d, recorded as rec.
func (w *Worker) recorded(d, rec push.Delivery, a push.Attempt) {
	if w.cfg.Observer != nil {
		w.cfg.Observer.Attempted(rec, a)
	}
	attrs := []any{"delivery", d.ID, "task", d.TaskID, "destination", d.Destination, "attempt", rec.Attempts, "status", a.Status}
	switch a.Outcome {
	case push.OutcomeDelivered:
		w.cfg.Log.Debug("push: delivered", attrs...)
	case push.OutcomeRetry:
		w.cfg.Log.Info("push: will retry", append(attrs, "next", a.NextAt, "reason", a.Error)...)
	default:
		w.cfg.Log.Warn("push: failed", append(attrs, "reason", a.Error)...)
	}
}

// purge deletes finished deliveries older than Keep.
func (w *Worker) purge(ctx context.Context, now time.Time) {
	for ctx.Err() == nil {
		n, err := w.store.PurgeDeliveries(ctx, now.Add(-w.cfg.Keep), purgeBatch)
		if err != nil {
			w.cfg.Log.Error("push: purge the outbox", "err", err)
			return
		}
		if n < purgeBatch {
			return
		}
	}
}
