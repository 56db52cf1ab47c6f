package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/storetest"
)

// TestMigrateFeedToLog: a schema-4 database's records feed becomes the
// change log's record events, in feed order, once each (the log's own
// record events, appended beside the feed, are not kept twice); the
// feed's tables go; get_changes reads the carried events.
func TestMigrateFeedToLog(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE kfa_schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:4] {
		if _, err := conn.Exec(ctx, m.sql); err != nil {
			t.Fatalf("migration %s: %v", m.name, err)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO kfa_schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	for _, stmt := range []string{
		`INSERT INTO records (id, doc) VALUES ('c', '{"id":"c","kind":"fix","title":"C","body":"c","updatedAt":"2026-03-01T10:00:00Z"}')`,
		`INSERT INTO feed (seq, id, op, at_ms, written_ms) VALUES (1, 'a', 'upsert', 1, 1), (2, 'b', 'upsert', 2, 2),
			(3, 'a', 'delete', 3, 3), (4, 'c', 'upsert', 4, 4)`,
		"UPDATE feed_state SET last = 4",
		`INSERT INTO change_log (kind, subject, at_ms, written_ms) VALUES ('agent.created', 'agent-1', 3, 3),
			('record.upserted', 'c', 4, 4)`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Settle(t, db) // the migration's events wait for the cluster's older transactions
	evs, err := db.ReadLog(ctx, changelog.Position{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Kind)+" "+e.ID)
	}
	want := "agent.created agent-1,record.upserted a,record.upserted b,record.deleted a,record.upserted c"
	if strings.Join(got, ",") != want {
		t.Fatalf("log after migrating:\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
	_, chs, err := db.Changes(ctx, changelog.Position{}, 100)
	if err != nil || len(chs) != 4 || chs[3].ID != "c" || chs[3].Record == nil || chs[3].Record.Title != "C" {
		t.Fatalf("records feed after migrating: %+v, %v", chs, err)
	}
	for _, table := range []string{"feed", "feed_state"} {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil || exists {
			t.Errorf("table %s is still there (%v)", table, err)
		}
	}
}
