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
// PostgreSQL.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return openTest(t) })
}

// TestConcurrent races callers against the limits over two pools on one
// database, as two kfa processes would.
func TestConcurrent(t *testing.T) {
	storetest.RunConcurrent(t, func(t *testing.T) (storetest.Store, storetest.Store) {
		url := pgtest.URL(t)
		return openURL(t, url), openURL(t, url)
	})
}

// TestRecordsConformance runs the records and feed suite against
// PostgreSQL.
func TestRecordsConformance(t *testing.T) {
	storetest.RunRecords(t, func(t *testing.T) knowledge.Store { return openTest(t) })
}
