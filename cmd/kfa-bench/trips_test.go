package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
)

// TestMeasureTrips: the benchmark's round-trip counts of an ask and of a
// reply on PostgreSQL are within issue 32's bound (2 each), and the
// report says so, and says when either is not.
func TestMeasureTrips(t *testing.T) {
	tr, err := measureTrips(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Asks.Commands != tripsRounds || tr.Replies.Commands != tripsRounds || !tripsMet(tr.Asks) || !tripsMet(tr.Replies) || tr.Other != 0 {
		t.Fatalf("trips: %+v", tr)
	}
	if line := tripsLine(tr); !strings.Contains(line, ": met;") {
		t.Fatalf("line: %s", line)
	}
	t.Log(tripsLine(tr))
	two := postgres.RoundTrips{Commands: 1, Trips: 2, Max: 2}
	for _, over := range []Trips{
		{Asks: postgres.RoundTrips{Commands: 1, Trips: 3, Max: 3}, Replies: two},
		{Asks: two, Replies: postgres.RoundTrips{Commands: 1, Trips: 3, Max: 3}},
	} {
		if line := tripsLine(over); !strings.Contains(line, "NOT met") {
			t.Fatalf("a command of 3 round trips: %s", line)
		}
	}
}
