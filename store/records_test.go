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

func TestUpsertRecordsOutcomes(t *testing.T) {
	ctx := context.Background()
	given := rec("given", "has a time")
	given.UpdatedAt = t0.Add(-24 * time.Hour)
	tests := []struct {
		name  string
		first []knowledge.Record // upserted at t0
		then  []knowledge.Record // upserted at t1
		want  []knowledge.Outcome
		// wantUpdated is the stored updatedAt of then[0] afterwards.
		wantUpdated time.Time
		wantFeed    uint64 // feed entries in total
	}{
		{"new record is added and stamped", nil, []knowledge.Record{rec("a", "A")},
			[]knowledge.Outcome{knowledge.Added}, t1, 1},
		{"identical content without updatedAt is unchanged", []knowledge.Record{rec("a", "A")}, []knowledge.Record{rec("a", "A")},
			[]knowledge.Outcome{knowledge.Unchanged}, t0, 1},
		{"changed title is updated and restamped", []knowledge.Record{rec("a", "A")}, []knowledge.Record{rec("a", "A2")},
			[]knowledge.Outcome{knowledge.Updated}, t1, 2},
		{"given updatedAt is kept", nil, []knowledge.Record{given},
			[]knowledge.Outcome{knowledge.Added}, given.UpdatedAt, 1},
		{"same content and same given updatedAt is unchanged", []knowledge.Record{given}, []knowledge.Record{given},
			[]knowledge.Outcome{knowledge.Unchanged}, given.UpdatedAt, 1},
		{"a new given updatedAt is an update", []knowledge.Record{given},
			[]knowledge.Record{func() knowledge.Record { r := given; r.UpdatedAt = t0; return r }()},
			[]knowledge.Outcome{knowledge.Updated}, t0, 2},
		{"tags take part in the content", []knowledge.Record{rec("a", "A")},
			[]knowledge.Record{func() knowledge.Record { r := rec("a", "A"); r.Tags = []string{"x"}; return r }()},
			[]knowledge.Outcome{knowledge.Updated}, t1, 2},
		{"a duplicate id in one batch sees the first write", nil, []knowledge.Record{rec("a", "A"), rec("a", "A"), rec("a", "B")},
			[]knowledge.Outcome{knowledge.Added, knowledge.Unchanged, knowledge.Updated}, t1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := setup(t)
			if tt.first != nil {
				if _, err := db.UpsertRecords(ctx, tt.first, t0); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := db.Digest()
			got, err := db.UpsertRecords(ctx, tt.then, t1)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("outcomes %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("outcome %d = %v, want %v", i, got[i], tt.want[i])
				}
			}
			after, _ := db.Digest()
			allUnchanged := true
			for _, o := range got {
				allUnchanged = allUnchanged && o == knowledge.Unchanged
			}
			if allUnchanged != (before == after) {
				t.Fatalf("all unchanged = %v but the file changed = %v", allUnchanged, before != after)
			}
			r, err := db.GetRecord(ctx, tt.then[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if !r.UpdatedAt.Equal(tt.wantUpdated) {
				t.Fatalf("updatedAt = %s, want %s", r.UpdatedAt, tt.wantUpdated)
			}
			st, err := db.Feed(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Last != tt.wantFeed {
				t.Fatalf("feed last = %d, want %d", st.Last, tt.wantFeed)
			}
		})
	}
}

func TestDeleteRecord(t *testing.T) {
	ctx := context.Background()
	db := setup(t)
	if _, err := db.UpsertRecords(ctx, []knowledge.Record{rec("a", "A"), rec("b", "B")}, t0); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteRecord(ctx, "a", t1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetRecord(ctx, "a"); !errors.Is(err, knowledge.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
	before, _ := db.Digest()
	if err := db.DeleteRecord(ctx, "a", t1); !errors.Is(err, knowledge.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if after, _ := db.Digest(); after != before {
		t.Fatal("a refused delete changed the file")
	}
	p, err := db.ListRecords(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 1 || len(p.Records) != 1 || p.Records[0].ID != "b" {
		t.Fatalf("after delete: total %d, records %+v", p.Total, p.Records)
	}
	ch, err := db.Changes(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id     string
		op     knowledge.Op
		record bool
	}{{"a", knowledge.OpUpsert, false}, {"b", knowledge.OpUpsert, true}, {"a", knowledge.OpDelete, false}}
	if len(ch) != len(want) {
		t.Fatalf("%d changes, want %d", len(ch), len(want))
	}
	for i, w := range want {
		c := ch[i]
		if c.Seq != uint64(i+1) || c.ID != w.id || c.Op != w.op || (c.Record != nil) != w.record {
			t.Fatalf("change %d = {seq %d id %s op %s record %v}, want {seq %d %+v}", i, c.Seq, c.ID, c.Op, c.Record != nil, i+1, w)
		}
	}
	if !ch[2].At.Equal(t1) {
		t.Fatalf("delete at %s, want %s", ch[2].At, t1)
	}
}

func TestListRecordsPages(t *testing.T) {
	ctx := context.Background()
	db := setup(t)
	ids := []string{"a", "b", "c", "d", "e"}
	var recs []knowledge.Record
	for _, id := range ids {
		recs = append(recs, rec(id, id))
	}
	if _, err := db.UpsertRecords(ctx, recs, t0); err != nil {
		t.Fatal(err)
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		p, err := db.ListRecords(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != len(ids) {
			t.Fatalf("total %d, want %d", p.Total, len(ids))
		}
		for _, r := range p.Records {
			got = append(got, r.ID)
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if len(got) != len(ids) {
		t.Fatalf("listed %v, want %v", got, ids)
	}
	for i := range ids {
		if got[i] != ids[i] {
			t.Fatalf("listed %v, want %v", got, ids)
		}
	}
}

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
