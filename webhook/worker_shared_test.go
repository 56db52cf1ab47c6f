package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/webhook"
)

// tracker is the receivers of several destinations: it records, per
// destination, the most requests it had in flight at once, and each
// delivery's requests, and which process sent them (User-Agent).
type tracker struct {
	t        *testing.T
	mu       sync.Mutex
	inflight map[string]int
	most     map[string]int
	got      map[string]int // jti -> requests
	by       map[string]map[string]int
}

func newTracker(t *testing.T) *tracker {
	return &tracker{t: t, inflight: map[string]int{}, most: map[string]int{}, got: map[string]int{}, by: map[string]map[string]int{}}
}

// receiver serves one destination; hold, when not nil, runs inside each
// request (while it is in flight).
func (tr *tracker) receiver(name string, hold func()) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		jti := jtiOf(tr.t, r.Header.Get("KFA-Signature"))
		tr.mu.Lock()
		tr.inflight[name]++
		tr.most[name] = max(tr.most[name], tr.inflight[name])
		tr.got[jti]++
		if tr.by[name] == nil {
			tr.by[name] = map[string]int{}
		}
		tr.by[name][r.UserAgent()]++
		tr.mu.Unlock()
		if hold != nil {
			hold()
		}
		tr.mu.Lock()
		tr.inflight[name]--
		tr.mu.Unlock()
	}))
	tr.t.Cleanup(srv.Close)
	return srv
}

// TestWorkersShareDestinationsFairly: two workers, each over its own
// *postgres.DB on one database (two processes), send a flood of
// deliveries to A and a few to B and C, due after all of A's. One
// destination never has two requests in flight across both; B's and C's
// are delivered while A's first request is still held (a flood starves
// no other destination); every delivery is sent exactly once.
func TestWorkersShareDestinationsFairly(t *testing.T) {
	tr := newTracker(t)
	firstA := make(chan struct{})
	var firstOnce sync.Once
	othersDone := make(chan struct{})
	a := tr.receiver("a", func() {
		held := false
		firstOnce.Do(func() { held = true; close(firstA) })
		if held {
			select {
			case <-othersDone:
			case <-time.After(20 * time.Second):
			}
		}
		time.Sleep(time.Millisecond) // a receiver that takes a moment, so overlaps would show
	})
	b, c := tr.receiver("b", nil), tr.receiver("c", nil)
	const nA, nB, nC = 400, 5, 5
	d, ids := outboxData(time.Now().Add(-time.Hour), floodSpec{a.URL + "/a", nA}, floodSpec{b.URL + "/b", nB}, floodSpec{c.URL + "/c", nC})
	dbs := backends[1].open(t, d, 2)

	var (
		mu        sync.Mutex
		delivered = map[string]int{}
		all       = make(chan struct{})
	)
	others := 0
	obs := observerFunc(func(dl push.Delivery, at push.Attempt) {
		if at.Outcome != push.OutcomeDelivered {
			t.Errorf("attempt of %s: %+v", dl.ID, at)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		delivered[dl.ID]++
		if dl.Destination != push.Destination(a.URL) {
			if others++; others == nB+nC {
				close(othersDone)
			}
		}
		if len(delivered) == len(ids) {
			close(all)
		}
	})
	for i, db := range dbs {
		w := newWorker(t, db, webhook.Config{Concurrency: 4, Observer: obs}, []string{"p1", "p2"}[i])
		w.Start(context.Background())
	}
	within(t, 10*time.Second, "A's first request", firstA)
	within(t, 10*time.Second, "B's and C's deliveries while A's first request is held", othersDone)
	within(t, 60*time.Second, "every delivery", all)

	tr.mu.Lock()
	defer tr.mu.Unlock()
	for name, n := range tr.most {
		if n != 1 {
			t.Errorf("destination %s had %d requests in flight at once, across the two processes; want 1", name, n)
		}
	}
	for id := range ids {
		if tr.got[id] != 1 || delivered[id] != 1 {
			t.Errorf("delivery %s: sent %d times, recorded delivered %d times; want once", id, tr.got[id], delivered[id])
		}
	}
	t.Logf("A's %d deliveries by process: %v; B's: %v; C's: %v", nA, tr.by["a"], tr.by["b"], tr.by["c"])
	for _, db := range dbs {
		if n := pending(t, db); n != 0 {
			t.Fatalf("%d pending at the end", n)
		}
	}
}
