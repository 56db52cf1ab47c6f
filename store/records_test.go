package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
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
	before, err := db.Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
	_, ch, err := db.Changes(ctx, changelog.Position{Seq: 2}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 1 || ch[0].Pos.Seq != 3 || ch[0].ID != "c" || ch[0].Record == nil || ch[0].Record.Title != "C" {
		t.Fatalf("changes after 2: %+v", ch)
	}
	st, err := db.Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.First.Seq != 1 || st.Last.Seq != 3 {
		t.Fatalf("feed state %+v, want first 1 last 3", st)
	}
	if st.Epoch == "" || st.Epoch != before.Epoch {
		t.Fatalf("epoch %q after reopening, %q before", st.Epoch, before.Epoch)
	}
	other, err := setup(t).Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
