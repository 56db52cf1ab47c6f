package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/knowledge"
)

func setup(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func rec(id, title string) knowledge.Record {
	return knowledge.Record{ID: id, Kind: "fix", Title: title, Body: "body of " + id}
}

var (
	t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func TestFeedSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpsertRecords(ctx, []knowledge.Record{rec("a", "A"), rec("b", "B")}, t0); err != nil {
		t.Fatal(err)
	}
	before, _ := db.Feed(ctx)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.UpsertRecords(ctx, []knowledge.Record{rec("c", "C")}, t1); err != nil {
		t.Fatal(err)
	}
	ch, err := db.Changes(ctx, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 1 || ch[0].Seq != 3 || ch[0].ID != "c" || ch[0].Record == nil || ch[0].Record.Title != "C" {
		t.Fatalf("changes after 2: %+v", ch)
	}
	st, _ := db.Feed(ctx)
	if st.First != 1 || st.Last != 3 {
		t.Fatalf("feed state %+v, want first 1 last 3", st)
	}
	if st.Epoch == "" || st.Epoch != before.Epoch {
		t.Fatalf("epoch %q after reopening, %q before", st.Epoch, before.Epoch)
	}
	other, _ := setup(t).Feed(ctx)
	if other.Epoch == st.Epoch {
		t.Fatal("two database files share a feed epoch")
	}
}

func TestRecordsReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.UpsertRecords(ctx, []knowledge.Record{rec("a", "A")}, t0); !errors.Is(err, errReadOnly) {
		t.Fatalf("upsert on a read-only store: %v", err)
	}
}

// TestChangesWithinIsBoundedByBytes: the read stops before the record
// that would pass maxBytes, returns at least one entry, and counts
// deletions as nothing.
func TestChangesWithinIsBoundedByBytes(t *testing.T) {
	ctx := context.Background()
	db := setup(t)
	var recs []knowledge.Record
	for i, body := range []int{100, 100, 100, 1000, 100} {
		r := rec(fmt.Sprintf("r%d", i), "t")
		r.Body = strings.Repeat("b", body)
		recs = append(recs, r)
	}
	if _, err := db.UpsertRecords(ctx, recs, t0); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteRecord(ctx, "r0", t0); err != nil { // entry 6; entry 1 now reads as a deletion
		t.Fatal(err)
	}
	size := recs[1].Size() // r1, r2 and r4 are this size, r3 900 bytes more
	tests := []struct {
		after    uint64
		limit    int
		maxBytes int
		want     string // ids read
	}{
		{0, 10, 0, "[r0 r1 r2 r3 r4 r0]"},
		{0, 10, 2 * size, "[r0 r1 r2]"},
		{0, 10, 2*size - 1, "[r0 r1]"},
		{0, 2, 10 * size, "[r0 r1]"},
		{2, 10, size, "[r2]"},
		{3, 10, size, "[r3]"}, // larger than the bound: alone
		{3, 10, 100 * size, "[r3 r4 r0]"},
	}
	for _, tt := range tests {
		ch, err := db.ChangesWithin(ctx, tt.after, tt.limit, tt.maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range ch {
			ids = append(ids, c.ID)
		}
		if got := fmt.Sprint(ids); got != tt.want {
			t.Errorf("ChangesWithin(%d, %d, %d) = %s, want %s", tt.after, tt.limit, tt.maxBytes, got, tt.want)
		}
	}
}
