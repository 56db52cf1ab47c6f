package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
)

// retiredIndexes are the indexes schema 9 had and schema 10 dropped.
var retiredIndexes = map[string]string{
	"tasks_all":             "tasks (status_ms DESC, id DESC)",
	"tasks_state":           "tasks (state, status_ms DESC, id DESC)",
	"tasks_owner_ctx":       "tasks (owner_id, context_id, status_ms DESC, id DESC)",
	"tasks_owner_ctx_state": "tasks (owner_id, context_id, state, status_ms DESC, id DESC)",
	"discussions_author":    "discussions (author_id, id)",
	"replies_author":        "replies (author_id, id)",
}

// TestMigration10DropsOperatorIndexes: a schema 9 database (its indexes
// for the operator and for an owner's contexts, and its context counters)
// loses them, passes kfa check, and still answers the listings they
// served, with their totals.
func TestMigration10DropsOperatorIndexes(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, db)
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	var made []tasks.Task
	for i := range 6 {
		owner := alice
		if i%2 == 1 {
			owner = bob
		}
		tk, err := e.ask(ctx, owner, fmt.Sprint("m", i), "")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, tk)
	}
	if _, err := e.ds.Reply(ctx, discussions.Author{ID: bob.ID, Name: bob.Name}, made[0].DiscussionID, "an answer"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	// Back to schema 9: its indexes, and the context counters its asks
	// wrote.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for name, on := range retiredIndexes {
		if _, err := conn.Exec(ctx, "CREATE INDEX "+name+" ON "+on); err != nil {
			t.Fatal(err)
		}
	}
	for _, stmt := range []string{
		`INSERT INTO counters (name, n)
			SELECT 't|o|' || owner_id || '|c|' || context_id, count(*) FROM tasks GROUP BY owner_id, context_id
			UNION ALL SELECT 't|o|' || owner_id || '|s|' || state || '|c|' || context_id, count(*) FROM tasks GROUP BY owner_id, state, context_id`,
		"DELETE FROM kfa_schema_migrations WHERE version = 10",
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}

	db, err = postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name := range retiredIndexes {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&exists); err != nil || exists {
			t.Errorf("index %s is still there (%v)", name, err)
		}
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM counters WHERE name LIKE 't|o|%|c|%'").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d context counters left (%v)", n, err)
	}
	if rep, err := db.Check(ctx); err != nil || !rep.OK() {
		t.Fatalf("check after the migration: %v %+v", err, rep.Violations)
	}
	for _, tc := range []struct {
		q           tasks.ListQuery
		total, page int
	}{
		{tasks.ListQuery{PageSize: 4}, 6, 4},
		{tasks.ListQuery{State: a2a.TaskStateCompleted, PageSize: 4}, 1, 1},
		{tasks.ListQuery{State: a2a.TaskStateWorking, PageSize: 4}, 5, 4},
		{tasks.ListQuery{OwnerID: alice.ID, ContextID: made[0].ContextID, PageSize: 4}, 1, 1},
		{tasks.ListQuery{OwnerID: bob.ID, ContextID: made[0].ContextID, PageSize: 4}, 0, 0},
	} {
		p, err := db.ListTasks(ctx, tc.q)
		if err != nil || p.Total != tc.total || len(p.Tasks) != tc.page {
			t.Errorf("%+v: %d tasks of %d (%v), want %d of %d", tc.q, len(p.Tasks), p.Total, err, tc.page, tc.total)
		}
	}
}
