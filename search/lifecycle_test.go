package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

func (f *fixture) reopen(t *testing.T) {
	t.Helper()
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	f.open(t)
}

func (f *fixture) count(t *testing.T) int {
	t.Helper()
	st, err := f.idx.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Records
}

func gen(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"id":"gen-%d","kind":"fix","title":"generated record quokka%d","body":"body %d"}`+"\n", i, i, i)
	}
	return b.String()
}

func TestCatchUpOnOpen(t *testing.T) {
	ctx := context.Background()
	f := setup(t, gen(0, 10))
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	// Written while no index runs: an import and a delete.
	f.importString(t, gen(10, 20))
	if err := f.svc.Delete(ctx, "gen-3"); err != nil {
		t.Fatal(err)
	}
	f.open(t)
	ls, err := f.db.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f.idx.Applied() != ls.Last {
		t.Fatalf("applied %s, the log at %s", f.idx.Applied(), ls.Last)
	}
	if n := f.count(t); n != 19 {
		t.Fatalf("%d records indexed, want 19", n)
	}
	if hits := find(t, f.idx, knowledge.Query{Text: "quokka15"}); len(hits) != 1 || hits[0].ID != "gen-15" {
		t.Fatalf("record written while closed: %v", ids(hits))
	}
	if hits := find(t, f.idx, knowledge.Query{Text: "quokka3"}); len(hits) != 0 {
		t.Fatalf("deleted record still found: %v", ids(hits))
	}
}

// waitApplied waits until the follower has applied the log up to its
// end as it stands now.
func waitApplied(t *testing.T, x *Index) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a measure
	defer cancel()
	ls, err := x.o.Changes.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.runner.WaitPast(ctx, ls.Last); err != nil {
		t.Fatalf("follower stuck at %s, want %s: %v", x.Applied(), ls.Last, err)
	}
}

func TestFollowerAppliesWrites(t *testing.T) {
	ctx := context.Background()
	f := setup(t, "")
	f.idx.Start(ctx)
	f.idx.Start(ctx) // a second Start does nothing
	f.importString(t, gen(0, 5))
	waitApplied(t, f.idx)
	if hits := find(t, f.idx, knowledge.Query{Text: "quokka4"}); len(hits) != 1 {
		t.Fatalf("imported record not found: %v", ids(hits))
	}
	if err := f.svc.Delete(ctx, "gen-4"); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, f.idx)
	if hits := find(t, f.idx, knowledge.Query{Text: "quokka4"}); len(hits) != 0 {
		t.Fatalf("deleted record found: %v", ids(hits))
	}
	f.idx.Stop()
	f.idx.Stop() // tolerated
}

// silentLog is a log whose wake-ups never come (a NOTIFY lost while the
// listener reconnected).
type silentLog struct{ changelog.Log }

func (silentLog) WakeLog() (<-chan struct{}, func()) { return nil, func() {} }

func TestFollowerTicksWithoutWakeUp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openStore(t, dir)
	svc := knowledge.NewService(db, now)
	idx, err := Open(ctx, Options{Dir: filepath.Join(dir, "index"), Changes: silentLog{db}, Records: db, Tick: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	idx.Start(ctx)
	if _, err := svc.Import(ctx, strings.NewReader(gen(0, 3)), knowledge.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, idx)
	if hits := find(t, idx, knowledge.Query{Text: "quokka2"}); len(hits) != 1 {
		t.Fatalf("imported record not found: %v", ids(hits))
	}
}

func TestRebuildWhen(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, f *fixture)
	}{
		{"the index directory is gone", func(t *testing.T, f *fixture) {
			if err := os.RemoveAll(filepath.Join(f.dir, "index")); err != nil {
				t.Fatal(err)
			}
		}},
		{"the index metadata is garbage", func(t *testing.T, f *fixture) {
			writeFile(t, filepath.Join(f.dir, "index", recordsDir, "index_meta.json"), "{not json")
		}},
		{"the index store is garbage", func(t *testing.T, f *fixture) {
			writeFile(t, filepath.Join(f.dir, "index", recordsDir, "store", "root.bolt"), strings.Repeat("\x00garbage", 1000))
		}},
		{"a rebuild was interrupted", func(t *testing.T, f *fixture) {
			if err := os.MkdirAll(filepath.Join(f.dir, "index", recordsDir+rebuildSuffix), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(f.dir, "index", recordsDir)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, gen(0, 25))
			if err := f.idx.Close(); err != nil {
				t.Fatal(err)
			}
			tt.spoil(t, f)
			f.open(t)
			if n := f.count(t); n != 25 {
				t.Fatalf("%d records after reopening, want 25", n)
			}
			if hits := find(t, f.idx, knowledge.Query{Text: "quokka24"}); len(hits) != 1 {
				t.Fatalf("search after rebuild: %v", ids(hits))
			}
			if _, err := os.Stat(filepath.Join(f.dir, "index", recordsDir+rebuildSuffix)); !os.IsNotExist(err) {
				t.Fatalf("leftover rebuild directory: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildWhenTheStoreWasReplaced: an index built over one database
// must not serve another (a restored backup, a new file): the feed entry
// it applied last no longer matches.
func TestRebuildWhenTheStoreWasReplaced(t *testing.T) {
	ctx := context.Background()
	f := setup(t, gen(0, 5))
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.db.Path()); err != nil {
		t.Fatal(err)
	}
	// A different database with as many feed entries.
	f.db = openStore(t, f.dir)
	f.svc = knowledge.NewService(f.db, now)
	f.importString(t, strings.ReplaceAll(gen(0, 5), "quokka", "wombat"))
	f.open(t)
	if hits := find(t, f.idx, knowledge.Query{Text: "quokka1"}); len(hits) != 0 {
		t.Fatalf("records of the old database are still found: %v", ids(hits))
	}
	if hits := find(t, f.idx, knowledge.Query{Text: "wombat1"}); len(hits) != 1 {
		t.Fatalf("records of the new database are not found: %v", ids(hits))
	}
	_ = ctx
}

func TestRebuildWhenTheSchemaChanged(t *testing.T) {
	f := setup(t, gen(0, 5))
	if err := f.idx.rec.SetInternal(keySchema, []byte("kfa-search-0")); err != nil {
		t.Fatal(err)
	}
	if err := f.idx.rec.SetInternal(keyFeed, nil); err != nil {
		t.Fatal(err)
	}
	f.reopen(t)
	v, err := f.idx.rec.GetInternal(keySchema)
	if err != nil || string(v) != schemaVersion {
		t.Fatalf("schema after reopening %q, %v", v, err)
	}
	if n := f.count(t); n != 5 {
		t.Fatalf("%d records, want 5", n)
	}
}

func TestLiveRebuild(t *testing.T) {
	ctx := context.Background()
	f := setup(t, samples(t))
	f.idx.Start(ctx)
	st, err := f.idx.Rebuild(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.db.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Rebuilt || st.Records != 78 || st.AppliedPosition != ls.Last.String() || st.LogPosition != ls.Last.String() {
		t.Fatalf("status %+v, log %+v", st, ls)
	}
	if hits := find(t, f.idx, knowledge.Query{Text: "database is locked", Product: "bbolt"}); len(hits) == 0 {
		t.Fatal("no hits after a rebuild")
	}
	f.importString(t, gen(0, 2))
	waitApplied(t, f.idx)
	if hits := find(t, f.idx, knowledge.Query{Text: "quokka1"}); len(hits) != 1 {
		t.Fatalf("the follower does not feed the rebuilt index: %v", ids(hits))
	}
}

func TestClosed(t *testing.T) {
	f := setup(t, gen(0, 1))
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.idx.Search(context.Background(), knowledge.Query{Text: "quokka0"}); err != ErrClosed {
		t.Fatalf("search after close: %v", err)
	}
	if err := f.idx.Sync(context.Background()); err != ErrClosed {
		t.Fatalf("sync after close: %v", err)
	}
	if err := f.idx.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// TestCatchUpInSmallBatches: a backlog is applied in batches bounded by
// count or by bytes, two at a time when they touch different records, in
// order when they do not.
func TestCatchUpInSmallBatches(t *testing.T) {
	// The records are 38 to 41 bytes (knowledge.Record.Size).
	for _, tt := range []struct {
		name string
		o    Options
	}{
		{"three entries", Options{BatchSize: 3}},
		{"100 bytes: two records, five a read", Options{BatchBytes: 100}},
		{"60 bytes: one record, three a read", Options{BatchBytes: 60}},
		{"1 byte: one record a read", Options{BatchBytes: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) { catchUpInSmallBatches(t, tt.o) })
	}
}

func catchUpInSmallBatches(t *testing.T, o Options) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openStore(t, dir)
	svc := knowledge.NewService(db, now)
	o.Dir, o.Changes, o.Records = filepath.Join(dir, "index"), db, db
	open := func() *Index {
		idx, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return idx
	}
	if err := open().Close(); err != nil {
		t.Fatal(err)
	}
	imp := func(s string) {
		if _, err := svc.Import(ctx, strings.NewReader(s), knowledge.ImportOptions{BatchSize: 2}); err != nil {
			t.Fatal(err)
		}
	}
	imp(gen(0, 12))                                          // seq 1-12: two disjoint halves per read
	imp(strings.ReplaceAll(gen(0, 3), "quokka", "platypus")) // seq 13-15
	imp(strings.ReplaceAll(gen(0, 3), "quokka", "echidna"))  // seq 16-18: the same ids, so one batch
	imp(strings.ReplaceAll(gen(5, 6), "quokka", "platypus")) // seq 19
	del := func(id string) {
		if err := svc.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// seq 20-24: gen-4 is deleted in the first half of the read and added
	// back in the second, so the halves must not race.
	del("gen-4")
	del("gen-1")
	del("gen-10")
	imp(strings.ReplaceAll(gen(4, 5), "quokka", "wombat"))
	del("gen-11")
	idx := open()
	defer idx.Close()
	ls, err := db.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if idx.Applied() != ls.Last {
		t.Fatalf("applied %s of %s", idx.Applied(), ls.Last)
	}
	st, err := idx.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 9 {
		t.Fatalf("%d records indexed, want 9", st.Records)
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"platypus5", []string{"gen-5"}}, {"quokka5", nil}, {"echidna2", []string{"gen-2"}}, {"platypus2", nil},
		{"quokka2", nil}, {"quokka7", []string{"gen-7"}}, {"echidna1", nil}, {"quokka10", nil},
		{"wombat4", []string{"gen-4"}},
	} {
		if got := ids(find(t, idx, knowledge.Query{Text: c.q})); fmt.Sprint(got) != fmt.Sprint(append([]string{}, c.want...)) {
			t.Errorf("%s: got %v, want %v", c.q, got, c.want)
		}
	}
}

// TestRebuildWhenTheFeedWasTrimmedPastIt: an index that was not running
// while retention trimmed entries after its position (here the delete of
// gen-2) cannot catch up from the feed; it is rebuilt from the records.
func TestRebuildWhenTheFeedWasTrimmedPastIt(t *testing.T) {
	ctx := context.Background()
	f := setup(t, gen(0, 5))
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	f.importString(t, strings.ReplaceAll(gen(1, 2), "quokka", "changed"))
	if err := f.svc.Delete(ctx, "gen-2"); err != nil {
		t.Fatal(err)
	}
	f.importString(t, gen(5, 6))
	if n, err := f.db.TrimLog(ctx, now().Add(time.Hour)); err != nil || n != 3 {
		t.Fatalf("trimmed %d, %v; want 3", n, err)
	}
	f.open(t)
	if hits := find(t, f.idx, knowledge.Query{Text: "quokka2"}); len(hits) != 0 {
		t.Fatalf("a record deleted while the index was closed is still found: %v", ids(hits))
	}
	if hits := find(t, f.idx, knowledge.Query{Text: "changed1"}); len(hits) != 1 {
		t.Fatalf("a record changed while the index was closed: %v", ids(hits))
	}
	if n := f.count(t); n != 5 {
		t.Fatalf("%d records indexed, want 5", n)
	}
}
