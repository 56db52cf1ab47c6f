package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/webhook"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// rig is a store with an agent, its services, and a signer.
type rig struct {
	db     *store.DB
	clk    *clock
	owner  agents.Agent
	tasks  *tasks.Service
	push   *push.Service
	signer *signing.Signer
	policy push.Policy
}

func newRig(t testing.TB) *rig {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName), store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	clk := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	policy, err := push.ParseAllow([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{db: db, clk: clk, tasks: tasks.NewService(db, tasks.Limits{}, db.Secret(), clk.now),
		push: push.NewService(db, policy, db.Secret(), clk.now), signer: signing.New(db, 0, clk.now), policy: policy}
	c, err := agents.NewService(db, clk.now).Create(context.Background(), "alice", []agents.Scope{agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	r.owner = c.Agent
	if err := r.signer.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// transition asks, configures the task to notify url, and cancels it; it
// returns the task id.
func (r *rig) transition(t testing.TB, msgID, url string) string {
	t.Helper()
	ctx := context.Background()
	text := "q " + msgID
	tk, _, err := r.tasks.Ask(ctx, tasks.AskInput{Asker: tasks.Asker{ID: r.owner.ID, Name: r.owner.Name}, Question: text,
		Message: a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.push.Create(ctx, r.owner.ID, tk.ID, a2a.TaskPushNotificationConfig{URL: url}); err != nil {
		t.Fatal(err)
	}
	r.clk.add(5 * time.Millisecond)
	if _, _, err := r.tasks.Cancel(ctx, r.owner.ID, tk.ID); err != nil {
		t.Fatal(err)
	}
	return tk.ID
}

type observed chan push.Attempt

func (o observed) Attempted(_ push.Delivery, a push.Attempt) { o <- a }

// counter is a receiver that records the order of the tasks it hears of
// and the most requests it had in flight at once.
type counter struct {
	mu       sync.Mutex
	inflight int
	most     int
	order    []string
	srv      *httptest.Server
}

func newCounter(t *testing.T) *counter {
	c := &counter{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.inflight++
		c.most = max(c.most, c.inflight)
		c.mu.Unlock()
		var ev a2a.StreamResponse
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &ev)
		time.Sleep(2 * time.Millisecond) // a receiver that takes a moment, so overlaps would show
		c.mu.Lock()
		c.inflight--
		if ev.StatusUpdate != nil {
			c.order = append(c.order, ev.StatusUpdate.TaskID)
		}
		c.mu.Unlock()
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// TestWorkerOrdersPerDestination: requests to one destination go one at
// a time, in the order of the transitions; other destinations proceed
// meanwhile; every delivery is delivered once.
func TestWorkerOrdersPerDestination(t *testing.T) {
	r := newRig(t)
	a, b := newCounter(t), newCounter(t)
	var wantA, wantB []string
	for i := range 30 {
		if i%3 == 2 {
			wantB = append(wantB, r.transition(t, "b"+string(rune('a'+i)), b.srv.URL))
		} else {
			wantA = append(wantA, r.transition(t, "a"+string(rune('a'+i)), a.srv.URL))
		}
	}
	obs := make(observed, 64)
	w := webhook.NewWorker(r.db, r.signer, webhook.NewSender(webhook.SenderConfig{Policy: r.policy}),
		webhook.Config{Concurrency: 4, Now: r.clk.now, Observer: obs})
	w.Start(context.Background())
	defer w.Stop()
	for range 30 {
		select {
		case at := <-obs:
			if at.Outcome != push.OutcomeDelivered {
				t.Fatalf("attempt: %+v", at)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("not every delivery was attempted within 30s")
		}
	}
	w.Stop()
	for name, c := range map[string]*counter{"a": a, "b": b} {
		want := map[string][]string{"a": wantA, "b": wantB}[name]
		if c.most != 1 || len(c.order) != len(want) {
			t.Fatalf("destination %s: %d in flight at most, %d requests", name, c.most, len(c.order))
		}
		for i := range want {
			if c.order[i] != want[i] {
				t.Fatalf("destination %s heard of the tasks out of order: %v, want %v", name, c.order, want)
			}
		}
	}
	st, err := r.db.OutboxStats(context.Background())
	if err != nil || st.Pending != 0 {
		t.Fatalf("outbox: %+v %v", st, err)
	}
}

// TestWorkerStopLeavesInFlightPending: a delivery in flight when the
// worker stops is not recorded, so it is sent again after a restart.
func TestWorkerStopLeavesInFlightPending(t *testing.T) {
	r := newRig(t)
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		arrived <- struct{}{}
		select {
		case <-req.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	id := r.transition(t, "m1", srv.URL)
	w := webhook.NewWorker(r.db, r.signer, webhook.NewSender(webhook.SenderConfig{Policy: r.policy}), webhook.Config{Now: r.clk.now})
	w.Start(context.Background())
	<-arrived
	w.Stop()
	w.Stop() // twice is fine
	page, err := r.db.Deliveries(context.Background(), push.DeliveryQuery{TaskID: id, PageSize: 10})
	if err != nil || len(page.Deliveries) != 1 || page.Deliveries[0].State != push.Pending || page.Deliveries[0].Attempts != 0 {
		t.Fatalf("after stopping mid-request: %+v %v", page, err)
	}
}

// BenchmarkDeliver1000 sends 1,000 due deliveries to one receiver on
// loopback (one destination: one request at a time).
func BenchmarkDeliver1000(b *testing.B) {
	for range b.N {
		b.StopTimer()
		r := newRig(b)
		var n atomic.Int32
		done := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_, _ = io.Copy(io.Discard, req.Body)
			if n.Add(1) == 1000 {
				close(done)
			}
		}))
		for i := range 1000 {
			r.transition(b, fmt.Sprintf("m%d", i), srv.URL)
		}
		w := webhook.NewWorker(r.db, r.signer, webhook.NewSender(webhook.SenderConfig{Policy: r.policy}), webhook.Config{Now: r.clk.now})
		b.StartTimer()
		w.Start(context.Background())
		<-done
		b.StopTimer()
		w.Stop()
		srv.Close()
	}
}
