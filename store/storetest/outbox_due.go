package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/push"
)

// dueAll walks every destination and returns every delivery due at now,
// destination by destination.
func dueAll(t *testing.T, s push.OutboxStore, now time.Time) []push.Delivery {
	t.Helper()
	ctx := context.Background()
	var out []push.Delivery
	after := ""
	for {
		dests, next, err := s.DueDestinations(ctx, push.DueQuery{Now: now, After: after, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dests {
			ds, err := s.DueDeliveries(ctx, d, now, 1000)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ds...)
		}
		if next == "" {
			return out
		}
		after = next
	}
}

// transitionTo asks, gives the task one config per url, and cancels it:
// one delivery per url, due at the clock's time.
func (e *pushEnv) transitionTo(t *testing.T, a agents.Agent, msgID string, urls ...string) {
	t.Helper()
	tk := e.ask(t, a, msgID)
	for i, u := range urls {
		e.config(t, a, tk.ID, fmt.Sprintf("c%d", i), u)
	}
	if _, _, err := e.tk.Cancel(context.Background(), a.ID, tk.ID); err != nil {
		t.Fatal(err)
	}
}

// testPushDueByDestination: the due deliveries are walked by destination,
// round-robin, so a destination with many due deliveries takes one step
// of a walk and hides no other; the walk is bounded and resumes; each
// destination's deliveries come in due order.
func testPushDueByDestination(t *testing.T, open Opener) {
	e := newPushEnv(t, open)
	ctx := context.Background()
	a := e.agent(t, "alice")
	const (
		flood = "https://flood.example.com:443"
		late  = "https://late.example.com:443"
	)
	t0 := e.clock.Now()
	var floodURLs []string
	for i := range 10 {
		floodURLs = append(floodURLs, fmt.Sprintf("https://flood.example.com/%d", i))
	}
	e.transitionTo(t, a, "f1", floodURLs...)
	e.transitionTo(t, a, "f2", floodURLs...)
	e.clock.Advance(time.Second)
	now := e.clock.Now()
	e.transitionTo(t, a, "l1", "https://late.example.com/")
	// Twenty destinations that sort after both and are not due: each
	// delivery's first attempt asked for a retry in an hour.
	var waiting []string
	for n := range 2 {
		var urls []string
		for i := range 10 {
			urls = append(urls, fmt.Sprintf("https://x%02d.example.com/", n*10+i))
			waiting = append(waiting, fmt.Sprintf("https://x%02d.example.com:443", n*10+i))
		}
		e.transitionTo(t, a, fmt.Sprintf("x%d", n), urls...)
	}
	retryAt := now.Add(time.Hour)
	for _, dest := range waiting {
		ds, err := e.store.DueDeliveries(ctx, dest, now, 10)
		if err != nil || len(ds) != 1 {
			t.Fatalf("due to %s: %d %v", dest, len(ds), err)
		}
		if _, err := e.store.RecordAttempt(ctx, ds[0].ID, push.Attempt{At: now, Status: 503, Outcome: push.OutcomeRetry, NextAt: retryAt}); err != nil {
			t.Fatal(err)
		}
	}

	walk := func(q push.DueQuery, want []string, wantNext string) {
		t.Helper()
		q.Now = now
		got, next, err := e.store.DueDestinations(ctx, q)
		if err != nil || !slices.Equal(got, want) || next != wantNext {
			t.Fatalf("walk %+v: %q, next %q, %v; want %q, next %q", q, got, next, err, want, wantNext)
		}
	}
	walk(push.DueQuery{Limit: 8}, []string{flood, late}, "")
	// Round-robin: one at a time, each walk going on after the last.
	walk(push.DueQuery{Limit: 1}, []string{flood}, flood)
	walk(push.DueQuery{After: flood, Limit: 1}, []string{late}, late)
	// A walk visits at most MaxDueScan destinations per one asked for,
	// and says where it stopped; the next goes on from there.
	walk(push.DueQuery{After: late, Limit: 1}, nil, waiting[push.MaxDueScan-1])
	walk(push.DueQuery{After: waiting[push.MaxDueScan-1], Limit: 1}, nil, "")
	// What the sender is busy with is skipped.
	walk(push.DueQuery{Limit: 1, Skip: []string{flood}}, []string{late}, late)
	walk(push.DueQuery{Limit: 8, Skip: []string{flood, late}}, nil, "")

	// One destination's deliveries: due ones only, in due order, bounded.
	all, err := e.store.DueDeliveries(ctx, flood, now, 100)
	if err != nil || len(all) != 20 {
		t.Fatalf("flood's due deliveries: %d %v", len(all), err)
	}
	for i, d := range all {
		if d.Destination != flood || !d.NextAt.Equal(t0) || i > 0 && d.ID <= all[i-1].ID {
			t.Fatalf("flood's delivery %d: %+v (due order is next attempt, then id)", i, d)
		}
	}
	if five, _ := e.store.DueDeliveries(ctx, flood, now, 5); len(five) != 5 || five[4].ID != all[4].ID {
		t.Fatalf("at most 5: %d", len(five))
	}
	if none, _ := e.store.DueDeliveries(ctx, flood, t0.Add(-time.Millisecond), 100); len(none) != 0 {
		t.Fatalf("due before the transition: %d", len(none))
	}
	if none, _ := e.store.DueDeliveries(ctx, waiting[0], now, 100); len(none) != 0 {
		t.Fatalf("due before its retry: %d", len(none))
	}
	if one, _ := e.store.DueDeliveries(ctx, waiting[0], retryAt, 100); len(one) != 1 {
		t.Fatalf("due at its retry: %d", len(one))
	}
	// A retry moves a delivery behind the others of its destination.
	first := all[0]
	if _, err := e.store.RecordAttempt(ctx, first.ID, push.Attempt{At: now, Status: 503, Outcome: push.OutcomeRetry, NextAt: now}); err != nil {
		t.Fatal(err)
	}
	again, _ := e.store.DueDeliveries(ctx, flood, now, 100)
	if len(again) != 20 || again[19].ID != first.ID || again[0].ID != all[1].ID {
		t.Fatalf("after a retry of the first: %d, last %s", len(again), again[len(again)-1].ID)
	}
	if at, ok, err := e.store.NextDue(ctx); err != nil || !ok || !at.Equal(t0) {
		t.Fatalf("next due: %v %v %v, want %v", at, ok, err, t0)
	}
	// A destination whose deliveries are all delivered is walked no more.
	for _, d := range again {
		if _, err := e.store.RecordAttempt(ctx, d.ID, push.Attempt{At: now, Status: 204, Outcome: push.OutcomeDelivered}); err != nil {
			t.Fatal(err)
		}
	}
	walk(push.DueQuery{Limit: 8}, []string{late}, "")
	if at, ok, err := e.store.NextDue(ctx); err != nil || !ok || !at.Equal(now) {
		t.Fatalf("next due after flood's: %v %v %v, want %v", at, ok, err, now)
	}
}
