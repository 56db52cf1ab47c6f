package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/webhook"
)

// failingRecords is a real store whose RecordAttempt fails while fail
// says so: a disk that is full, a database that does not answer.
type failingRecords struct {
	outbox
	mu    sync.Mutex
	fail  func(call int) bool
	calls int
	tried chan int // each failed call's number
}

var errInjected = errors.New("injected: the store cannot record")

func (f *failingRecords) RecordAttempt(ctx context.Context, id string, a push.Attempt) (push.Delivery, error) {
	f.mu.Lock()
	f.calls++
	n, fail := f.calls, f.fail(f.calls)
	f.mu.Unlock()
	if fail {
		f.tried <- n
		return push.Delivery{}, errInjected
	}
	return f.outbox.RecordAttempt(ctx, id, a)
}

// sharedFailingRecords keeps the destination locks of a shared outbox.
type sharedFailingRecords struct {
	*failingRecords
	locker push.DestinationLocker
}

func (s sharedFailingRecords) DestinationLocks(ctx context.Context) (push.DestinationLocks, error) {
	return s.locker.DestinationLocks(ctx)
}

// withFailingRecords wraps db, keeping what it implements.
func withFailingRecords(db outbox, fail func(call int) bool) (*failingRecords, outbox) {
	f := &failingRecords{outbox: db, fail: fail, tried: make(chan int, 100)}
	if pg, ok := db.(*postgres.DB); ok {
		return f, sharedFailingRecords{f, pg}
	}
	return f, f
}

// jtiReceiver is a receiver that counts the requests of each delivery.
type jtiReceiver struct {
	t   *testing.T
	mu  sync.Mutex
	got map[string]int
	srv *httptest.Server
	hit chan struct{}
}

func newJTIReceiver(t *testing.T) *jtiReceiver {
	r := &jtiReceiver{t: t, got: map[string]int{}, hit: make(chan struct{}, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		jti := jtiOf(t, req.Header.Get("KFA-Signature"))
		r.mu.Lock()
		r.got[jti]++
		r.mu.Unlock()
		r.hit <- struct{}{}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *jtiReceiver) count(jti string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[jti]
}

// TestWorkerRetriesTheRecordNotTheSend: an attempt the store cannot
// record is sent once; the worker tries again to record it, after
// waits that double, and records it once the store can. (It used to send
// the delivery again at once, in a tight loop.)
func TestWorkerRetriesTheRecordNotTheSend(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			recv := newJTIReceiver(t)
			d, ids := outboxData(time.Now().Add(-time.Minute), floodSpec{recv.srv.URL + "/r", 1})
			var id string
			for id = range ids {
			}
			const failures = 6
			f, db := withFailingRecords(be.open(t, d, 1)[0], func(call int) bool { return call <= failures })
			var (
				mu    sync.Mutex
				waits []time.Duration
			)
			after := func(d time.Duration) <-chan time.Time {
				mu.Lock()
				waits = append(waits, d)
				mu.Unlock()
				ch := make(chan time.Time, 1)
				ch <- time.Now()
				return ch
			}
			delivered := make(chan struct{})
			obs := observerFunc(func(d push.Delivery, a push.Attempt) {
				if d.ID == id && a.Outcome == push.OutcomeDelivered {
					close(delivered)
				}
			})
			w := newWorker(t, db, webhook.Config{After: after, RecordRetry: 50 * time.Millisecond, Observer: obs}, "kfa-test")
			w.Start(context.Background())
			within(t, 10*time.Second, "the delivery recorded once the store can", delivered)
			w.Stop()
			if n := recv.count(id); n != 1 {
				t.Fatalf("sent %d times while its record failed %d times, want once", n, failures)
			}
			want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
				400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(waits, want) {
				t.Fatalf("waits between tries at the record: %v, want %v", waits, want)
			}
			got, err := f.outbox.Delivery(context.Background(), id)
			if err != nil || got.State != push.Delivered || got.Attempts != 1 {
				t.Fatalf("recorded: %+v %v; want delivered after 1 attempt", got, err)
			}
		})
	}
}

// TestWorkerUnrecordedSendsAgainAfterRestart: a worker that stops (or
// dies) while it cannot record an attempt leaves the delivery pending,
// and the next worker sends it again: at least once.
func TestWorkerUnrecordedSendsAgainAfterRestart(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			recv := newJTIReceiver(t)
			d, ids := outboxData(time.Now().Add(-time.Minute), floodSpec{recv.srv.URL + "/r", 1})
			var id string
			for id = range ids {
			}
			plain := be.open(t, d, 1)[0]
			f, db := withFailingRecords(plain, func(int) bool { return true })
			never := func(time.Duration) <-chan time.Time { return nil }
			w := newWorker(t, db, webhook.Config{After: never}, "kfa-test")
			w.Start(context.Background())
			select {
			case <-f.tried:
			case <-time.After(10 * time.Second):
				t.Fatal("no attempt within 10s")
			}
			w.Stop()
			if got, err := plain.Delivery(context.Background(), id); err != nil || got.State != push.Pending || got.Attempts != 0 {
				t.Fatalf("after a stop with the record missing: %+v %v; want pending, no attempt recorded", got, err)
			}
			delivered := make(chan struct{})
			obs := observerFunc(func(d push.Delivery, a push.Attempt) {
				if d.ID == id && a.Outcome == push.OutcomeDelivered {
					close(delivered)
				}
			})
			again := newWorker(t, plain, webhook.Config{Observer: obs}, "kfa-test")
			again.Start(context.Background())
			within(t, 10*time.Second, "the restarted worker's delivery", delivered)
			if n := recv.count(id); n != 2 {
				t.Fatalf("sent %d times, want twice: once before the stop, once after", n)
			}
		})
	}
}
