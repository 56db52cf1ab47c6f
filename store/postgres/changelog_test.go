package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/store/storetest"
)

// TestChangeLogLateCommit: an event whose transaction began first but
// commits last must not be skipped by a reader that already read the
// events of a later transaction. The log hides every event while an
// older transaction still runs, then shows them in (tx, seq) order.
func TestChangeLogLateCommit(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(ctx) })
		return c
	}
	insert := `INSERT INTO change_log (kind, subject, at_ms, written_ms) VALUES ('record.upserted', $1, 0, 0)`
	early, err := conn().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := early.Exec(ctx, insert, "early"); err != nil {
		t.Fatal(err)
	}
	late := conn()
	if _, err := late.Exec(ctx, insert, "late"); err != nil { // commits at once
		t.Fatal(err)
	}
	if evs, err := db.ReadLog(ctx, changelog.Position{}, 10); err != nil || len(evs) != 0 {
		t.Fatalf("while an older transaction runs: %v, %v; want nothing", evs, err)
	}
	if err := early.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	storetest.Settle(t, db) // both events, once no older transaction of the cluster runs
	evs, err := db.ReadLog(ctx, changelog.Position{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].ID != "early" || evs[1].ID != "late" || !evs[0].Pos.Before(evs[1].Pos) {
		t.Fatalf("after the older commit: %+v; want early then late", evs)
	}
	st, err := db.LogState(ctx)
	if err != nil || st.Last != evs[1].Pos || st.First != evs[0].Pos {
		t.Fatalf("state %+v, %v", st, err)
	}
}
