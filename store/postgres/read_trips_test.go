package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
)

// TestGetTaskRoundTrips: GetTask (ViewTask, and the store's GetTask)
// reads one row, and one statement reads one snapshot of its own, so it
// is one round trip. A read-only transaction around it (BEGIN, the
// SELECT, COMMIT) made it three, on a path every GetTask takes.
func TestGetTaskRoundTrips(t *testing.T) {
	db := openOneConn(t)
	e := newEngine(t, db)
	ctx := context.Background()
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	tk, err := e.ask(ctx, alice, "m-1", "")
	if err != nil {
		t.Fatal(err)
	}
	// The first use of a statement on a connection prepares it, a round
	// trip of its own, once per connection (the pool has one).
	if err := e.tk.ViewTask(ctx, alice.ID, tk.ID, func(*tasks.Snapshot) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetTask(ctx, alice.ID, tk.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, owner, id string
		err             error
	}{
		{"own task", alice.ID, tk.ID, nil},
		{"another's task", bob.ID, tk.ID, tasks.ErrNotFound},
		{"no such task", alice.ID, "01JZZZZZZZZZZZZZZZZZZZZZZZ", tasks.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				read func() (string, error)
			}{
				{"ViewTask", func() (got string, err error) {
					err = e.tk.ViewTask(ctx, tc.owner, tc.id, func(s *tasks.Snapshot) error { got = string(s.ID); return nil })
					return got, err
				}},
				{"GetTask", func() (string, error) { t, err := db.GetTask(ctx, tc.owner, tc.id); return t.ID, err }},
			} {
				before := db.RoundTrips(postgres.TripsRead)
				got, err := r.read()
				if !errors.Is(err, tc.err) {
					t.Fatalf("%s: %v, want %v", r.name, err, tc.err)
				}
				if tc.err == nil && got != tk.ID {
					t.Fatalf("%s read task %q, want %q", r.name, got, tk.ID)
				}
				after := db.RoundTrips(postgres.TripsRead)
				if n, trips := after.Commands-before.Commands, after.Trips-before.Trips; n != 1 || trips != 1 {
					t.Fatalf("%s: %d reads of %d round trips, want 1 of 1", r.name, n, trips)
				}
			}
		})
	}
}

// TestListTasksRoundTrips: a page of ListTasks and its total are one
// statement, one snapshot and one round trip, for an owner (whose total
// is a counter) and for the operator (whose total is counted), and for an
// empty page after a cursor too (the total does not ride on a task).
func TestListTasksRoundTrips(t *testing.T) {
	db := openOneConn(t)
	e := newEngine(t, db)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	for _, m := range []string{"m-1", "m-2", "m-3"} {
		if _, err := e.ask(ctx, alice, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	first, err := db.ListTasks(ctx, tasks.ListQuery{OwnerID: alice.ID, PageSize: 2})
	if err != nil || first.Next == nil {
		t.Fatalf("first page: %+v %v", first, err)
	}
	gone := *first.Next
	gone.ID, gone.StatusTime = "00000000000000000000000000", gone.StatusTime.Add(-time.Hour) // after every task
	for _, tc := range []struct {
		name        string
		q           tasks.ListQuery
		tasks, want int // tasks on the page, and the total
		trips       uint64
	}{
		{"an owner's first page", tasks.ListQuery{OwnerID: alice.ID, PageSize: 2}, 2, 3, 1},
		{"an owner's last page", tasks.ListQuery{OwnerID: alice.ID, PageSize: 2, After: first.Next}, 1, 3, 1},
		{"the operator's page", tasks.ListQuery{PageSize: 10}, 3, 3, 1},
		{"a state with no tasks", tasks.ListQuery{OwnerID: alice.ID, State: a2a.TaskStateCompleted, PageSize: 2}, 0, 0, 1},
		{"an empty page after a cursor", tasks.ListQuery{OwnerID: alice.ID, PageSize: 2, After: &gone}, 0, 3, 1},
		{"the operator's empty page after a cursor", tasks.ListQuery{PageSize: 2, After: &gone}, 0, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := db.ListTasks(ctx, tc.q); err != nil { // prepares the statement on the connection
				t.Fatal(err)
			}
			before := db.RoundTrips(postgres.TripsRead)
			page, err := db.ListTasks(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Tasks) != tc.tasks || page.Total != tc.want {
				t.Fatalf("%d tasks of %d, want %d of %d", len(page.Tasks), page.Total, tc.tasks, tc.want)
			}
			if trips := db.RoundTrips(postgres.TripsRead).Trips - before.Trips; trips != tc.trips {
				t.Fatalf("%d round trips, want %d", trips, tc.trips)
			}
		})
	}
}

// openOneConn opens a database on a fresh test database with a pool of
// one connection, so that the statements pgx prepares are prepared once
// and a warm-up leaves only the round trips a test counts.
func openOneConn(t *testing.T) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
