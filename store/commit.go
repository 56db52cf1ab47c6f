package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Group commit. Every write of a request runs in a transaction shared with
// the writes that arrived while the previous transaction was committing,
// and is acknowledged only after that transaction has committed and been
// fsynced. bbolt's own Batch caps each batch at the calls of one
// MaxBatchDelay window and queues the batches, so under load many small
// transactions wait on each other's fsyncs; the committer instead takes
// everything that is waiting once the writer is free, so the batch grows
// with the load and the cost of a commit (its fsyncs, and the pages many
// writes share) is paid once for all of them.

// maxBatch bounds the calls in one transaction.
const maxBatch = 1000

var errClosed = errors.New("store: closed")

// errSolo tells a call that failed inside a batch to run in a transaction
// of its own, so that the error it returns is its own.
var errSolo = errors.New("store: run alone")

// command is the body of one command's write, in two phases. The first
// loads what the command names and calls its decision: it only reads, so
// when it returns an error (a refusal, or a load that failed) the
// transaction is exactly as the command found it, and the committer sets
// the call aside and carries on with the batch: no rollback, no rerun of
// the others. Allowed, it returns the second phase, which writes the
// decision's effects, or nil when the decision has none (an idempotent
// retry, a cancel of a canceled task). An error from the second phase
// rolls the batch back.
type command func(tx *bolt.Tx) (write func(tx *bolt.Tx) error, err error)

// writeOnly is a command whose only phase writes: update's functions.
func writeOnly(fn func(*bolt.Tx) error) command {
	return func(*bolt.Tx) (func(*bolt.Tx) error, error) { return fn, nil }
}

// refusal marks an error of an update function that refused its call.
// Unlike a command's decision, such a function may have written before
// it refused, so the committer treats it as a failure (rolled back, run
// again alone); the mark only lets its caller see the refusal's own error
// (unrefuse). Commands never need it.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refuse marks err as an update function's refusal.
func refuse(err error) error { return &refusal{err: err} }

// unrefuse is the error a refused call reports to its caller.
func unrefuse(err error) error {
	var r *refusal
	if errors.As(err, &r) {
		return r.err
	}
	return err
}

type commitCall struct {
	cmd  command
	done chan error
	at   time.Time
	// refused is the call's refusal, kept until its batch's transaction
	// has ended.
	refused error
}

// committer runs group commits over db, one transaction at a time.
type committer struct {
	db    *bolt.DB
	delay time.Duration

	mu      sync.Mutex
	pending []*commitCall
	closed  bool
	wake    chan struct{} // a call arrived (capacity 1)
	stopped chan struct{} // the loop has ended

	last int // calls in the previous transaction (loop only)

	// Counters, for tests and statistics: batches taken, transactions
	// begun (reruns and solo calls included), and write functions run.
	batches, txs, runs atomic.Uint64
	// queued, when set (by tests), hears of every call as it is queued.
	queued chan<- struct{}
}

func newCommitter(db *bolt.DB, delay time.Duration) *committer {
	c := &committer{db: db, delay: delay, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.loop()
	return c
}

var callPool = sync.Pool{New: func() any { return &commitCall{done: make(chan error, 1)} }}

// do runs cmd in a group commit and returns its error once the
// transaction has committed (nil) or rolled back; a refusal is answered
// when its batch's transaction has ended. cmd may run more than once and
// must leave no effect outside tx.
func (c *committer) do(cmd command) error {
	call := callPool.Get().(*commitCall)
	call.cmd, call.at = cmd, time.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		call.cmd = nil
		callPool.Put(call)
		return errClosed
	}
	c.pending = append(c.pending, call)
	c.mu.Unlock()
	if c.queued != nil {
		c.queued <- struct{}{}
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	err := <-call.done
	call.cmd, call.refused = nil, nil
	callPool.Put(call)
	if err == errSolo {
		err = c.db.Update(func(tx *bolt.Tx) error {
			c.txs.Add(1)
			c.runs.Add(1)
			tuneTx(tx)
			write, err := decide(cmd, tx)
			if err != nil || write == nil {
				return err
			}
			return safely(write, tx)
		})
	}
	return unrefuse(err)
}

// close stops taking calls, commits those already waiting, and returns
// once the last transaction has ended.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.stopped
}

func (c *committer) loop() {
	defer close(c.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		c.mu.Lock()
		for len(c.pending) == 0 {
			if c.closed {
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			<-c.wake
			c.mu.Lock()
		}
		// Wait for company, but never longer than delay after the oldest
		// call arrived, and not at all once as many calls wait as the last
		// transaction held (under steady load, everyone is back) or when
		// closing.
		for !c.closed && len(c.pending) < maxBatch && len(c.pending) < c.last {
			wait := c.delay - time.Since(c.pending[0].at)
			if wait <= 0 {
				break
			}
			c.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-c.wake:
				timer.Stop() // Go 1.23+: no stale tick can be left in timer.C
			}
			c.mu.Lock()
		}
		n := min(len(c.pending), maxBatch)
		batch := make([]*commitCall, n)
		copy(batch, c.pending)
		rest := copy(c.pending, c.pending[n:])
		clear(c.pending[rest:])
		c.pending = c.pending[:rest]
		c.mu.Unlock()
		c.last = n
		c.run(batch)
	}
}

// run commits batch in one transaction. A call whose decision refuses
// is set aside and the batch goes on: its first phase wrote nothing, so it
// cost one run and nothing else. A call that fails while writing is taken
// out and told to run alone, and the others run again without it: the
// failed call's writes, and what other calls decided after seeing them,
// are rolled back with the transaction.
//
// Refusals are answered when the transaction has ended, with the
// transaction's error if it failed to commit: a refusal may rest on the
// writes of calls before it in the batch, and is only as true as they are
// durable. A rerun keeps the refusals already decided, since every call
// before a refused one runs again on the same state.
func (c *committer) run(batch []*commitCall) {
	c.batches.Add(1)
	var refused []*commitCall
	for len(batch) > 0 {
		failed := -1
		kept := batch[:0:0]
		err := c.db.Update(func(tx *bolt.Tx) error {
			c.txs.Add(1)
			tuneTx(tx)
			for i, call := range batch {
				c.runs.Add(1)
				write, err := decide(call.cmd, tx)
				if err != nil {
					call.refused = err
					refused = append(refused, call)
					continue
				}
				if write != nil {
					if err := safely(write, tx); err != nil {
						failed = i
						return err
					}
				}
				kept = append(kept, call)
			}
			return nil
		})
		if failed >= 0 {
			batch[failed].done <- errSolo
			batch = append(kept, batch[failed+1:]...)
			continue
		}
		for _, call := range batch {
			if call.refused == nil {
				call.done <- err
			}
		}
		for _, call := range refused {
			if err != nil {
				call.done <- err
			} else {
				call.done <- call.refused
			}
		}
		return
	}
	for _, call := range refused {
		call.done <- call.refused
	}
}

// decide runs cmd's first phase, turning a panic into an error (a
// refusal: the phase writes nothing) so that one bad command cannot take
// the committer, and every waiting request, down with it.
func decide(cmd command, tx *bolt.Tx) (write func(*bolt.Tx) error, err error) {
	defer func() {
		if p := recover(); p != nil {
			write, err = nil, fmt.Errorf("store: panic in a decision: %v", p)
		}
	}()
	return cmd(tx)
}

// safely calls fn, turning a panic into an error so that one bad write
// cannot take the committer (and every waiting request) down with it.
func safely(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: panic in a write: %v", p)
		}
	}()
	return fn(tx)
}
