package federation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/service"
)

// Defaults of Options.
const (
	// DefaultPoll is how often a peer's feed is read when nothing wakes
	// its follower.
	DefaultPoll = 2 * time.Second
	// DefaultWatch is how often the runner reads the peers' list, to
	// start and stop their workers.
	DefaultWatch = time.Second
	// maxPagesPerPass bounds one pass: a peer with much to send yields
	// its worker between passes.
	maxPagesPerPass = 20
	// purgeStep is how many documents one step of a purge deletes.
	purgeStep = 1000
)

// Options configure a Runner.
type Options struct {
	// Poll and Watch: see DefaultPoll and DefaultWatch.
	Poll  time.Duration
	Watch time.Duration
	// HTTP is the client of every peer; nil: NewHTTPClient.
	HTTP *http.Client
	Log  *slog.Logger
	// Changes and Cursors are this server's change log and its durable
	// cursors: the forwarder follows the log (a discussion opened is
	// forwarded, one answered stops waiting). Without them asks are not
	// forwarded.
	Changes changelog.Log
	Cursors changelog.Cursors
	// Observer counts what the runner does (metrics); nil: nothing.
	Observer Observer
}

// Observer is told what the runner does with each peer.
type Observer interface {
	// Failed: a try of job ("follow", "forward") with peer failed.
	Failed(peer, job string)
	// Forwarded: an ask was sent to peer.
	Forwarded(peer string)
	// Answered: an answer came back from peer.
	Answered(peer string)
}

type noObserver struct{}

func (noObserver) Failed(string, string) {}
func (noObserver) Forwarded(string)      {}
func (noObserver) Answered(string)       {}

// Runner runs this server's side of federation: a worker per peer that
// follows its feed (and purges a removed one), in the background, with
// Start and Stop. Every process runs one; the peers' leases keep one
// pass of a peer at a time across them.
type Runner struct {
	svc    *service.Federation
	o      Options
	holder string

	mu      sync.Mutex
	workers map[string]*worker
	cancel  context.CancelFunc
	done    chan struct{}
	// forwards follows the change log for the forwarder.
	forwards *changelog.Runner
}

// workerState is what a peer's worker keeps between its passes.
type workerState struct {
	// since is where the next poll of the peer's completed tasks starts
	// (the peer's clock); zero: from the oldest forward in flight.
	since time.Time
}

// worker is one peer's goroutine and how to wake it.
type worker struct {
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// NewRunner returns a stopped runner over svc.
func NewRunner(svc *service.Federation, o Options) *Runner {
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Watch <= 0 {
		o.Watch = DefaultWatch
	}
	if o.HTTP == nil {
		o.HTTP = NewHTTPClient()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	host, _ := os.Hostname()
	holder := fmt.Sprintf("%s:%d:%s", clipHost(host), os.Getpid(), hex.EncodeToString(b[:]))
	return &Runner{svc: svc, o: o, holder: holder, workers: map[string]*worker{}}
}

// Start runs the runner until ctx ends or Stop. A second Start does
// nothing.
func (r *Runner) Start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return
	}
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	if r.o.Changes != nil && r.o.Cursors != nil {
		r.forwards = changelog.NewRunner(r.o.Changes, forwarder{r}, changelog.RunnerOptions{
			Name: forwarderCursor, From: r.forwarderFrom, Cursors: r.o.Cursors, Log: r.o.Log})
		if err := r.forwards.Start(ctx); err != nil {
			r.o.Log.Error("federation: the forwarder did not start", "err", err.Error())
			r.forwards = nil
		}
	}
	go r.watch(ctx)
}

// Stop stops every worker and waits for them. Stopping a stopped runner
// does nothing.
func (r *Runner) Stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel = nil
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	if r.forwards != nil {
		r.forwards.Stop()
	}
}

// Sync waits until the forwarder has applied every event committed
// before the call (tests).
func (r *Runner) Sync(ctx context.Context) error {
	if r.forwards == nil {
		return nil
	}
	return r.forwards.Sync(ctx)
}

// Wake makes the worker of the peer name run now (a push from the peer
// says it has something).
func (r *Runner) Wake(name string) {
	r.mu.Lock()
	w := r.workers[name]
	r.mu.Unlock()
	if w != nil {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// watch starts a worker for each peer and stops those of peers gone,
// every Watch.
func (r *Runner) watch(ctx context.Context) {
	defer close(r.done)
	defer r.stopWorkers(nil)
	t := time.NewTicker(r.o.Watch)
	defer t.Stop()
	for {
		ps, err := r.svc.Peers(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.o.Log.Warn("federation: list the peers", "err", err.Error())
		} else {
			live := map[string]bool{}
			for _, p := range ps {
				live[p.Name] = true
				r.ensureWorker(ctx, p.Name)
			}
			r.stopWorkers(live)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ensureWorker starts the worker of the peer name unless it runs.
func (r *Runner) ensureWorker(ctx context.Context, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.workers[name]; ok {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	w := &worker{wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	r.workers[name] = w
	go func() {
		defer close(w.done)
		r.run(wctx, name, w.wake)
	}()
}

// stopWorkers stops the workers of the peers not in live (all of them
// for nil) and waits for them.
func (r *Runner) stopWorkers(live map[string]bool) {
	r.mu.Lock()
	var stopped []*worker
	for name, w := range r.workers {
		if live == nil || !live[name] {
			w.cancel()
			stopped = append(stopped, w)
			delete(r.workers, name)
		}
	}
	r.mu.Unlock()
	for _, w := range stopped {
		<-w.done
	}
}

// run is the worker of the peer name: a pass now, then one every Poll or
// when woken, until ctx ends.
func (r *Runner) run(ctx context.Context, name string, wake <-chan struct{}) {
	t := time.NewTimer(0)
	defer t.Stop()
	var st workerState
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		if more := r.pass(ctx, name, &st); more {
			t.Reset(0)
		} else {
			t.Reset(r.o.Poll)
		}
	}
}

// pass does what the peer name needs now: a purge step of a removed
// peer, or a follower pass. more says to come back at once.
func (r *Runner) pass(ctx context.Context, name string, st *workerState) (more bool) {
	ps, err := r.svc.Peers(ctx)
	if err != nil {
		return false
	}
	for _, p := range ps {
		if p.Name != name {
			continue
		}
		if p.Purging {
			_, done, err := r.svc.Purge(ctx, name, purgeStep)
			if err != nil && ctx.Err() == nil {
				r.o.Log.Warn("federation: purge", "peer", name, "err", err.Error())
				return false
			}
			return !done
		}
		if p.Paused {
			return false
		}
		if p.ForwardAsks {
			r.forward(ctx, p.Peer, st)
		}
		if p.Follow {
			return r.follow(ctx, name)
		}
	}
	return false
}

// clipHost bounds a host name kept in a peer's lease.
func clipHost(h string) string {
	if len(h) > 64 {
		return h[:64]
	}
	return h
}

// peerClient is the client of p.
func (r *Runner) peerClient(p peers.Peer) *Client { return NewClient(p.URL, p.Token, r.o.HTTP) }
