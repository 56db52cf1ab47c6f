package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/webhook"
)

// observerFunc is a webhook.Observer.
type observerFunc func(push.Delivery, push.Attempt)

func (f observerFunc) Attempted(d push.Delivery, a push.Attempt) { f(d, a) }

// TestWorkerFloodDelaysNoOther: 20,000 deliveries due to destination A,
// whose receiver holds every request, and then one to B: B's is
// delivered within seconds, and A never has more than one request in
// flight. (The due scan used to stop after 16,384 entries, all A's, so
// B's was never reached while A was busy.)
func TestWorkerFloodDelaysNoOther(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			release := make(chan struct{})
			aHeld := make(chan struct{})
			var aOnce sync.Once
			var aRequests, aInFlight, aMost atomic.Int32
			a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				aRequests.Add(1)
				aOnce.Do(func() { close(aHeld) })
				n := aInFlight.Add(1)
				for m := aMost.Load(); n > m && !aMost.CompareAndSwap(m, n); m = aMost.Load() {
				}
				defer aInFlight.Add(-1)
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}))
			defer a.Close()
			defer close(release) // before a.Close: the held request ends
			b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
			}))
			defer b.Close()
			bGot := make(chan struct{})
			var once sync.Once
			obs := observerFunc(func(d push.Delivery, at push.Attempt) {
				if d.Destination == push.Destination(b.URL) && at.Outcome == push.OutcomeDelivered {
					once.Do(func() { close(bGot) })
				}
			})

			d, _ := outboxData(time.Now().Add(-time.Hour), floodSpec{a.URL + "/a", 20000}, floodSpec{b.URL + "/b", 1})
			db := be.open(t, d, 1)[0]
			w := newWorker(t, db, webhook.Config{Observer: obs}, "kfa-test")
			start := time.Now()
			w.Start(context.Background())
			within(t, 10*time.Second, "A's first request", aHeld)
			within(t, 10*time.Second, "B's one delivery behind A's 20,000, delivered and recorded while A's is held", bGot)
			t.Logf("%s: B delivered %s after the start, behind 20,000 due to A (A: %d request(s), at most %d in flight)",
				be.name, time.Since(start).Round(time.Millisecond), aRequests.Load(), aMost.Load())
			w.Stop()
			if aMost.Load() != 1 {
				t.Fatalf("A had %d requests in flight at once, want 1", aMost.Load())
			}
			if n := pending(t, db); n != 20000 {
				t.Fatalf("%d pending after B's delivery, want A's 20,000 (A's held request is cut off, not recorded)", n)
			}
		})
	}
}
