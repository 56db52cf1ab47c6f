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

// refusal is what a write function returns when a rule refuses the call
// before the call has written anything (an unknown discussion, a task that
// is not cancelable, a limit reached). The transaction is then exactly as
// the call found it, so the committer keeps the batch going without it:
// no rollback, no rerun of the others. Make one with refuse.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refuse marks err as a refusal decided before any write. Returning it
// after a write would commit that write: a function refuses first and
// writes after.
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
	fn   func(*bolt.Tx) error
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

// do runs fn in a group commit and returns its error once the transaction
// has committed (nil) or rolled back. fn may run more than once and must
// leave no effect outside tx.
func (c *committer) do(fn func(*bolt.Tx) error) error {
	call := callPool.Get().(*commitCall)
	call.fn, call.at = fn, time.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		call.fn = nil
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
	call.fn, call.refused = nil, nil
	callPool.Put(call)
	if err == errSolo {
		err = c.db.Update(func(tx *bolt.Tx) error {
			c.txs.Add(1)
			c.runs.Add(1)
			tuneTx(tx)
			return safely(fn, tx)
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

// run commits batch in one transaction. A call that refuses before
// writing (refuse) is set aside and the batch goes on: it cost one run of
// its function and nothing else. A call that fails otherwise is taken
// out and told to run alone, and the others run again without it: the
// failed call's writes, and what other calls did after seeing them, are
// rolled back with the transaction.
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
				nodes := nodeCount(tx)
				c.runs.Add(1)
				err := safely(call.fn, tx)
				if err == nil {
					kept = append(kept, call)
					continue
				}
				var r *refusal
				// A refusal that touched a page has written after all (a
				// bug in its function): it is rolled back like a failure.
				if errors.As(err, &r) && nodeCount(tx) == nodes {
					call.refused = r.err
					refused = append(refused, call)
					continue
				}
				failed = i
				return err
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

// nodeCount is how many pages tx has taken into memory to change them.
func nodeCount(tx *bolt.Tx) int64 {
	st := tx.Stats()
	return st.GetNodeCount()
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
