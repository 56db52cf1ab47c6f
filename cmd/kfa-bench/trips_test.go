package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
)

// TestMeasureTrips: the benchmark counts the round trips of asks,
// replies and every read route on PostgreSQL; an ask stays within issue
// 24's bound, each read route is counted (at least one round trip), and
// the report names them.
func TestMeasureTrips(t *testing.T) {
	tr, err := measureTrips(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Asks.Commands != tripsRounds || tr.Replies.Commands != tripsRounds || tr.Asks.PerCommand() > maxAskTrips || tr.Other != 0 {
		t.Fatalf("trips: %+v", tr)
	}
	line := tripsLine(tr)
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
	t.Log(line)
}
