package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store/postgres"
)

// TestLogWakesEveryProcess: a write through one process wakes the log's
// followers of another (NOTIFY after commit, LISTEN), which then read the
// event; after every listening connection is cut, the next write still
// wakes them (the listener reconnects, and wakes its followers when it
// does, since a NOTIFY sent meanwhile is lost).
func TestLogWakesEveryProcess(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	a, b := twoProcesses(t, url)
	wake, stop := a.WakeLog()
	defer stop()
	drain := func() {
		for {
			select {
			case <-wake:
			default:
				return
			}
		}
	}
	// write upserts a record through b and waits until a is woken and
	// reads it.
	write := func(id, what string) {
		t.Helper()
		st, err := a.LogState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		drain()
		if _, err := b.UpsertRecords(ctx, []knowledge.Record{{ID: id, Kind: "fix", Title: id, Body: id}}, time.Now()); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(time.Minute) // a guard, not a measure
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("%s: process A was never woken", what)
		}
		// Woken: the event is readable once every transaction older than
		// it has ended, on the whole cluster (another test's transaction
		// can delay it), so read again until it shows, as a follower's
		// timer would.
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-wake:
			case <-tick.C:
			case <-deadline:
				t.Fatalf("%s: process A was woken but never read the write", what)
			}
			evs, err := a.ReadLog(ctx, st.Last, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 1 && evs[0].Kind == changelog.RecordUpserted && evs[0].ID == id {
				return
			}
		}
	}
	write("first", "a write through B")

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	write("second", "a write through B after the listeners were cut")
}

// twoProcesses opens the database at url twice, with a pool each, as two
// kfa processes would.
func twoProcesses(t *testing.T, url string) (*postgres.DB, *postgres.DB) {
	t.Helper()
	open := func() *postgres.DB {
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	return open(), open()
}
