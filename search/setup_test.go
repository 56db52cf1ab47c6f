package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store"
)

// fixture is a store with the records service and an index over it.
type fixture struct {
	dir string
	db  *store.DB
	svc *knowledge.Service
	idx *Index
}

var now = func() time.Time { return time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC) }

func openStore(t testing.TB, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// newAgent creates an agent named name in db and returns its id: every
// ask and reply is an agent's, and an agent that does not exist makes
// none.
func newAgent(t testing.TB, db *store.DB, name string) string {
	t.Helper()
	c, err := agents.NewService(db, now).Create(context.Background(), name, []agents.Scope{agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	return c.Agent.ID
}

// setup opens a store in a temp dir, imports the JSON Lines in jsonl, and
// opens the index.
func setup(t testing.TB, jsonl string) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, db: openStore(t, dir)}
	f.svc = knowledge.NewService(f.db, now)
	if jsonl != "" {
		f.importString(t, jsonl)
	}
	f.open(t)
	return f
}

func (f *fixture) importString(t testing.TB, jsonl string) knowledge.ImportSummary {
	t.Helper()
	sum, err := f.svc.Import(context.Background(), stringsReader(jsonl), knowledge.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected > 0 {
		t.Fatalf("import rejected lines: %+v", sum.Errors)
	}
	return sum
}

func (f *fixture) open(t testing.TB) {
	t.Helper()
	idx, err := Open(context.Background(), Options{
		Dir: filepath.Join(f.dir, "index"), Changes: f.db, Records: f.db,
		Discussions: f.db, Cursors: f.db, PublicURL: "http://kfa.test", SynonymsFile: filepath.Join(f.dir, SynonymsFile),
	})
	if err != nil {
		t.Fatal(err)
	}
	f.idx = idx
	t.Cleanup(func() { _ = idx.Close() })
	waitWalked(t, idx)
}

// waitWalked waits for x's background walk of the discussions to end.
// The timeout is a guard against a hang, not a measure.
func waitWalked(t testing.TB, x *Index) {
	t.Helper()
	done := x.walked()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		t.Fatal("the walk of the discussions did not end")
	}
}

func samples(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../samples/records.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
