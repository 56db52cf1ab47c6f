package postgres_test

import (
	"context"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/store/storetest"
)

func openTest(t testing.TB) *postgres.DB { return openURL(t, pgtest.URL(t)) }

func openURL(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestConformance runs the store conformance suite, unchanged, against
// PostgreSQL, and kfa check on every database it leaves behind.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return checkAtCleanup(t, openTest(t)) })
}

// TestConcurrent races callers against the limits over two pools on one
// database, as two kfa processes would, and runs kfa check on what each
// race leaves.
func TestConcurrent(t *testing.T) {
	storetest.RunConcurrent(t, func(t *testing.T) (storetest.Store, storetest.Store) {
		url := pgtest.URL(t)
		return checkAtCleanup(t, openURL(t, url)), openURL(t, url)
	})
}

// checkAtCleanup runs kfa check on db when the test ends (before db
// closes: cleanups run last-registered first) and fails the test on any
// violation, so that whatever the services write, races included, check
// raises no false alarm (the bbolt suite does the same).
func checkAtCleanup(t *testing.T, db *postgres.DB) *postgres.DB {
	t.Helper()
	t.Cleanup(func() {
		rep, err := db.Check(context.Background())
		if err != nil {
			t.Fatalf("check: %v", err)
		}
		for _, v := range rep.Violations {
			t.Errorf("check after the test: %s %s [%s] task %s: %s", v.Kind, v.Table, v.Key, v.TaskID, v.Detail)
		}
	})
	return db
}

// TestRecordsConformance runs the records and feed suite against
// PostgreSQL.
func TestRecordsConformance(t *testing.T) {
	storetest.RunRecords(t, func(t *testing.T) knowledge.Store { return openTest(t) })
}
