package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
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
	DefaultBatch       = 1024
	// perRunner bounds the deliveries one runner takes, so that a busy
	// destination hands the others their turn between its runs.
	perRunner  = 64
	purgeEvery = 10 * time.Minute
	purgeBatch = 1000
	// idleCheck bounds how long the worker sleeps without looking at the
	// outbox: a delivery made due by another process (or an operator's
	// retry on the file) is picked up within it.
	idleCheck = 5 * time.Second
	// claimLease is how long a claim (push.Claimer) holds a delivery for
	// this worker: longer than any one attempt takes.
	claimLease = 2 * time.Minute
)

// Config tunes a Worker.
type Config struct {
	// Concurrency bounds the requests in flight at once. Default 8.
	Concurrency int
	// Retry is the retry schedule and period.
	Retry push.RetryPolicy
	// Keep is how long delivered and failed deliveries are kept before
	// they are purged. Default 7 days.
	Keep time.Duration
	// Batch bounds the due deliveries read at once. Default 1024.
	Batch int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Jitter returns a number in [0, max); default math/rand/v2.
	Jitter func(max int64) int64
	// Observer, when set, hears of every attempt.
	Observer Observer
	Log      *slog.Logger
}

// Worker sends the outbox's due deliveries: at most Concurrency requests
// at once, one at a time per destination, each destination's deliveries
// in due order. Start it once; Stop it before closing the store.
type Worker struct {
	store  push.OutboxStore
	signer Signer
	sender *Sender
	cfg    Config

	kick chan struct{}

	mu     sync.Mutex
	busy   map[string]bool // destinations with a runner
	cancel context.CancelFunc
	done   chan struct{}
	runs   sync.WaitGroup
	sem    chan struct{}
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
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func(n int64) int64 { return rand.Int64N(n) }
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Retry = cfg.Retry.WithDefaults()
	return &Worker{store: store, signer: signer, sender: sender, cfg: cfg, kick: make(chan struct{}, 1),
		busy: map[string]bool{}, sem: make(chan struct{}, cfg.Concurrency)}
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
// (they are sent again after a restart). It returns once nothing runs,
// and is safe to call twice, or without Start.
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
		wait := idleCheck
		if at, ok, err := w.store.NextDue(ctx); err == nil && ok {
			wait = min(wait, max(at.Sub(w.cfg.Now()), time.Millisecond))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// dispatch starts a runner for every destination that has due deliveries
// and none running. It reads the outbox holding mu, so that a delivery a
// runner has sent but not yet recorded is never read as due by a
// dispatch that then sees its destination free: a runner frees its
// destination, under mu, only after its records committed.
func (w *Worker) dispatch(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	taken := map[string]int{}
	due, err := w.store.DueDeliveries(ctx, w.cfg.Now(), w.cfg.Batch, func(dest string) bool {
		if w.busy[dest] || taken[dest] >= perRunner {
			return false
		}
		taken[dest]++
		return true
	})
	if err != nil {
		if ctx.Err() == nil {
			w.cfg.Log.Error("push: read the outbox", "err", err)
		}
		return
	}
	var order []string
	byDest := map[string][]push.Delivery{}
	for _, d := range due {
		if _, seen := byDest[d.Destination]; !seen {
			order = append(order, d.Destination)
		}
		byDest[d.Destination] = append(byDest[d.Destination], d)
	}
	for _, dest := range order {
		if ctx.Err() != nil {
			break
		}
		w.busy[dest] = true
		w.runs.Add(1)
		go w.run(ctx, dest, byDest[dest])
	}
}

// run sends one destination's due deliveries, one after the other. Each
// outcome is recorded in the background (group commit puts many records
// in one transaction), and the destination is freed once all of them
// have committed.
func (w *Worker) run(ctx context.Context, dest string, list []push.Delivery) {
	var records sync.WaitGroup
	defer func() {
		records.Wait()
		w.mu.Lock()
		delete(w.busy, dest)
		w.mu.Unlock()
		w.runs.Done()
		w.Kick()
	}()
	for _, d := range list {
		select {
		case w.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		if !w.claim(ctx, d) {
			<-w.sem
			continue // another process sends it
		}
		a, ok := w.attempt(ctx, d)
		<-w.sem
		if !ok {
			return // stopping: the delivery stays pending and is sent again
		}
		records.Add(1)
		go func() {
			defer records.Done()
			w.record(d, a)
		}()
	}
}

// claim claims d for this worker when the outbox is shared by several
// processes (push.Claimer); any outbox else is this worker's alone.
func (w *Worker) claim(ctx context.Context, d push.Delivery) bool {
	c, ok := w.store.(push.Claimer)
	if !ok {
		return true
	}
	now := w.cfg.Now()
	claimed, err := c.ClaimDelivery(ctx, d.ID, now, now.Add(claimLease))
	if err != nil {
		if ctx.Err() == nil {
			w.cfg.Log.Error("push: claim a delivery", "delivery", d.ID, "err", err)
		}
		return false
	}
	return claimed
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

// record stores attempt a of d.
func (w *Worker) record(d push.Delivery, a push.Attempt) {
	rec, err := w.store.RecordAttempt(context.Background(), d.ID, a)
	if errors.Is(err, push.ErrNotPending) {
		return // its config was deleted meanwhile, which failed it
	}
	if err != nil {
		w.cfg.Log.Error("push: record attempt", "delivery", d.ID, "err", err)
		return
	}
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
