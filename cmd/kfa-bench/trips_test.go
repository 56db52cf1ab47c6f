package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
)

// TestMeasureTrips: the benchmark's round-trip count of an ask on
// PostgreSQL is within the bound, and the report says so.
func TestMeasureTrips(t *testing.T) {
	tr, err := measureTrips(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Asks.Commands != tripsRounds || tr.Replies.Commands != tripsRounds || tr.Asks.PerCommand() > maxAskTrips || tr.Other != 0 {
		t.Fatalf("trips: %+v", tr)
	}
	if line := tripsLine(tr); !strings.Contains(line, ": met)") {
		t.Fatalf("line: %s", line)
	}
	t.Log(tripsLine(tr))
	over := Trips{Asks: postgres.RoundTrips{Commands: 1, Trips: 4, Max: 4}}
	if line := tripsLine(over); !strings.Contains(line, "NOT met") {
		t.Fatalf("an ask of 4 round trips: %s", line)
	}
}
