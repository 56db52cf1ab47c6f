package e2e

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
)

// Timing of another agent's task against an unknown id, as an outside
// tester measures it: the median of many requests of each, interleaved
// so that whatever else the machine does weighs on both alike.
const (
	// timingRequests is how many requests a route's measure makes, half
	// with each id.
	timingRequests = 400
	// timingRounds is how many measures a route gets: a route fails only
	// when every one tells the ids apart, so a burst of load during one
	// measure is not taken for a leak, while a leak shows in all.
	timingRounds = 3
	// timingRatio and timingSlack are the tolerance: the foreign task's
	// median may exceed the unknown id's by this factor plus this much.
	// See TestForeignTaskTiming for why these numbers.
	timingRatio = 1.25
	timingSlack = 60 * time.Microsecond
)

// TestForeignTaskTiming: on every route that takes a task id, on every
// binding and both stores, another agent's task with heavy push configs (10 of 4 KB)
// costs what an unknown id costs: over 400 interleaved requests, the
// medians do not tell them apart. The routes must check the owner before
// they load (bbolt: decode; PostgreSQL: lock) anything else of the task;
// TestForeignTaskIsNeverDecoded proves the same without a clock.
//
// The tolerance: a median over 200 interleaved requests moves by a few
// per cent between runs, even on a loaded machine, because the load
// weighs on both ids alike; a route that loads the configs first
// (CancelTask on bbolt decoded 40 KB of configs before the owner check)
// takes 2 to 3 times as long for the foreign task, and more under the
// race detector. The foreign median may therefore exceed the unknown
// one's by 25%, plus 60 µs for the tick and scheduling noise of a fast
// route; and a route fails only when all of three measures exceed it.
func TestForeignTaskTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the timing of every task-id route takes a minute")
	}
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) string
	}{
		{"bbolt", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return pgtest.URL(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.store(t)
			h := start(t, func(c *server.Config) {
				c.Store = url
				c.RequestRate = 0 // thousands of requests by one agent
				withGRPC(c)
			})
			alice, ac := h.agent("alice")
			bob, _ := h.agent("bob")
			tk := h.ask(ac, "timing-1", "A question whose task carries heavy push configs")
			heavyConfigs(t, h, alice.Token, tk.ID, 10)
			const unknown = "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"

			routes := taskIDRoutes(h, bob.Token)
			names := make([]string, 0, len(routes))
			for name := range routes {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				call := routes[name]
				var got []string
				leaks := true
				for round := 0; round < timingRounds && leaks; round++ {
					foreign, missing := timeInterleaved(t, call, tk.ID, unknown, timingRequests)
					limit := time.Duration(float64(missing)*timingRatio) + timingSlack
					got = append(got, foreign.String()+" vs "+missing.String())
					leaks = foreign > limit
				}
				if leaks {
					t.Errorf("%s: another agent's task and an unknown id are told apart by the time of the answer "+
						"(medians over %d requests, foreign vs unknown: %s)", name, timingRequests, strings.Join(got, "; "))
				} else {
					t.Logf("%s: %s", name, got[len(got)-1])
				}
			}
		})
	}
}

// timeInterleaved calls call n times, half with each id, in pairs whose
// order is drawn at random, and returns each id's median time. Every
// answer must be 404 TASK_NOT_FOUND, the same for both.
func timeInterleaved(t *testing.T, call func(id string) (int, string), a, b string, n int) (time.Duration, time.Duration) {
	t.Helper()
	da, db := make([]time.Duration, 0, n/2), make([]time.Duration, 0, n/2)
	timed := func(id string) time.Duration {
		start := time.Now()
		st, body := call(id)
		took := time.Since(start)
		if !strings.Contains(body, "TASK_NOT_FOUND") {
			t.Fatalf("task %s: %d %s, want TASK_NOT_FOUND", id, st, body)
		}
		return took
	}
	for range 10 { // warm up: connections, prepared statements, caches
		timed(a)
		timed(b)
	}
	for range n / 2 {
		if rand.IntN(2) == 0 {
			da = append(da, timed(a))
			db = append(db, timed(b))
		} else {
			db = append(db, timed(b))
			da = append(da, timed(a))
		}
	}
	return median(da), median(db)
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
