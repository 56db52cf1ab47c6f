package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/store/storetest"
)

// TestTrimTwoProcesses: two processes (two pools) on one database trim
// the log at once while both append: between them they remove exactly
// the old events once, keep every fresh one and each record's latest, and
// the trimmed point is the newest event removed.
func TestTrimTwoProcesses(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	a, b := twoProcesses(t, url)
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := old.Add(60 * 24 * time.Hour)
	upsert := func(db *postgres.DB, at time.Time, ids ...string) {
		t.Helper()
		var recs []knowledge.Record
		for _, id := range ids {
			recs = append(recs, knowledge.Record{ID: id, Kind: "fix", Title: id + at.String(), Body: "b"})
		}
		if _, err := db.UpsertRecords(ctx, recs, at); err != nil {
			t.Fatal(err)
		}
	}
	// 40 old versions of r0..r9 (30 superseded), then their latest.
	for round := range 4 {
		for i := range 10 {
			upsert(a, old.Add(time.Duration(round)*time.Minute), fmt.Sprintf("r%d", i))
		}
	}
	upsert(b, now, "fresh-0") // the newest event is a fresh one
	// Events are readable, and trimmable, once every transaction older
	// than them ended, on the whole cluster (other tests' included):
	// Settle waits for that, so that the trims below see every old one.
	storetest.Settle(t, a)
	var wg sync.WaitGroup
	removed := make([]int, 2)
	for i, db := range []*postgres.DB{a, b} {
		wg.Go(func() {
			for j := range 5 { // and both append while trimming
				upsert(db, now, fmt.Sprintf("fresh-%d-%d", i, j))
			}
		})
		wg.Go(func() {
			n, err := db.TrimLog(ctx, now.Add(-24*time.Hour))
			if err != nil {
				t.Error(err)
			}
			removed[i] = n
		})
	}
	wg.Wait()
	if removed[0]+removed[1] != 30 {
		t.Fatalf("the two processes removed %d and %d, want the 30 superseded versions between them", removed[0], removed[1])
	}
	storetest.Settle(t, a)
	_, chs, err := a.Changes(ctx, changelog.Position{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range chs {
		seen[c.ID]++
	}
	if len(chs) != 21 || len(seen) != 21 {
		t.Fatalf("the feed holds %d changes of %d records, want each of the 21 records' latest once", len(chs), len(seen))
	}
	st, err := a.Feed(ctx)
	if err != nil || st.Trimmed.IsZero() || !st.Trimmed.Before(st.First) {
		t.Fatalf("feed %+v, %v: want a trimmed point before the first change held", st, err)
	}
}
