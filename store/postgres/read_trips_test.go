package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
)

// TestGetTaskRoundTrips: GetTask (ViewTask, and the store's GetTask)
// reads one row, and one statement reads one snapshot of its own, so it
// is one round trip. A read-only transaction around it (BEGIN, the
// SELECT, COMMIT) made it three, on a path every GetTask takes.
func TestGetTaskRoundTrips(t *testing.T) {
	db, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
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
