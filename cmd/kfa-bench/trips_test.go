package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
)

// TestMeasureTrips: the benchmark counts the round trips of asks,
// replies and every read route on PostgreSQL; an ask and a reply are
// within issue 32's bound (2 each), and the report says so, and says when
// either is not; each read route is counted (at least one round trip),
// and the report names them.
func TestMeasureTrips(t *testing.T) {
	tr, err := measureTrips(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Asks.Commands != tripsRounds || tr.Replies.Commands != tripsRounds || !tripsMet(tr.Asks) || !tripsMet(tr.Replies) || tr.Other != 0 {
		t.Fatalf("trips: %+v", tr)
	}
	line := tripsLine(tr)
	if !strings.Contains(line, ": met;") {
		t.Fatalf("line: %s", line)
	}
	for _, r := range tr.Reads {
		if r.Reads == 0 || r.Max == 0 || r.Trips < r.Reads {
			t.Errorf("read route %s: %+v, want every call counted", r.Route, r)
		}
		if !strings.Contains(line, r.Route+" ") {
			t.Errorf("the line does not name %s: %s", r.Route, line)
		}
	}
	if len(tr.Reads) < 8 {
		t.Fatalf("%d read routes: %+v", len(tr.Reads), tr.Reads)
	}
	two := postgres.RoundTrips{Commands: 1, Trips: 2, Max: 2}
	for _, over := range []Trips{
		{Asks: postgres.RoundTrips{Commands: 1, Trips: 3, Max: 3}, Replies: two},
		{Asks: two, Replies: postgres.RoundTrips{Commands: 1, Trips: 3, Max: 3}},
	} {
		if line := tripsLine(over); !strings.Contains(line, "NOT met") {
			t.Fatalf("a command of 3 round trips: %s", line)
		}
	}
	t.Log(line)
}
