package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestLimiterBudget(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := New(Config{Events: 5, Per: time.Minute, Now: clk.Now})
	for i := range 5 {
		if _, ok := l.Allow("a"); !ok {
			t.Fatalf("event %d refused", i+1)
		}
	}
	wait, ok := l.Allow("a")
	if ok {
		t.Fatal("6th event in a minute allowed")
	}
	if wait <= 0 || wait > 12*time.Second {
		t.Fatalf("wait %s, want (0, 12s]", wait)
	}
	if _, ok := l.Allow("b"); !ok {
		t.Fatal("keys share a budget")
	}
	clk.Advance(wait)
	if _, ok := l.Allow("a"); !ok {
		t.Fatal("not allowed after the announced wait")
	}
	if _, ok := l.Allow("a"); ok {
		t.Fatal("more than one token refilled")
	}
}

func TestReservationCancelRefunds(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := New(Config{Events: 1, Per: time.Minute, Now: clk.Now})
	r, _, ok := l.Take("a")
	if !ok {
		t.Fatal("first take refused")
	}
	r.Cancel()
	if _, ok := l.Allow("a"); !ok {
		t.Fatal("a canceled reservation did not give its token back")
	}
	Reservation{}.Cancel() // the zero value is safe
}

func TestDisabled(t *testing.T) {
	l := New(Config{Events: 0})
	for range 1000 {
		if _, ok := l.Allow("a"); !ok {
			t.Fatal("a disabled limiter refused")
		}
	}
	if l.Enabled() || l.Len() != 0 || l.String() != "unlimited" {
		t.Fatalf("disabled limiter: %v %d %s", l.Enabled(), l.Len(), l)
	}
}

func TestEvictionBoundsMemory(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := New(Config{Events: 60, Per: time.Minute, MaxKeys: 1000, Now: clk.Now})
	for i := range 100_000 {
		l.Allow(fmt.Sprintf("ip-%d", i))
		if i%100 == 0 {
			clk.Advance(time.Millisecond)
		}
	}
	if n := l.Len(); n > 1000 {
		t.Fatalf("%d keys tracked, bound is 1000", n)
	}
	// Idle keys go once their bucket would be full again.
	clk.Advance(2 * time.Minute)
	l.Allow("new")
	if n := l.Len(); n != 1 {
		t.Fatalf("%d keys after everything went idle, want 1", n)
	}
}

func TestEvictionKeepsDecisions(t *testing.T) {
	// An exhausted key must stay limited however many other keys arrive.
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := New(Config{Events: 2, Per: time.Minute, MaxKeys: 10, Now: clk.Now})
	l.Allow("abuser")
	l.Allow("abuser")
	for i := range 5 {
		l.Allow(fmt.Sprintf("k%d", i))
	}
	if _, ok := l.Allow("abuser"); ok {
		t.Fatal("exhausted key allowed while the map had room")
	}
}

func TestBlockedPeeksWithoutTaking(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l := New(Config{Events: 2, Per: time.Minute, Now: clk.Now})
	if _, blocked := l.Blocked("a"); blocked {
		t.Fatal("an unseen key is blocked")
	}
	l.Allow("a")
	if _, blocked := l.Blocked("a"); blocked {
		t.Fatal("blocked with a token left")
	}
	l.Allow("a")
	wait, blocked := l.Blocked("a")
	if !blocked || wait <= 0 || wait > 30*time.Second {
		t.Fatalf("Blocked = %s, %v; want blocked for up to 30s", wait, blocked)
	}
	for range 5 { // peeking takes nothing
		l.Blocked("a")
	}
	clk.Advance(wait)
	if _, blocked := l.Blocked("a"); blocked {
		t.Fatal("still blocked after the announced wait")
	}
}
