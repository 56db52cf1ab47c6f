package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/tasks"
)

// TestStrangerLocksNothingOfATask: a command naming another agent's task
// (a config put or delete, a cancel, a config listing) neither reads nor
// locks any row of it: another transaction holds alice's task and its
// pending delivery locked, and every one of bob's commands on that task
// answers "not found" at once, none waiting on a lock. Were the owner
// checked after the loads, bob would wait on (and, unopposed, take) the
// locks of rows that are not his.
func TestStrangerLocksNothingOfATask(t *testing.T) {
	url := pgtest.URL(t)
	db := openURL(t, url)
	e := newEngine(t, db)
	ctx := context.Background()
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	tk, err := e.ask(ctx, alice, "a1", "")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 9, 0, 1, 0, time.UTC)
	cfg := push.Config{ID: "c1", TaskID: tk.ID, OwnerID: alice.ID, URL: "https://hooks.example.com/kfa", CreatedAt: at}
	if _, _, err := db.PutPushConfig(ctx, cfg, push.MaxConfigsPerTask); err != nil {
		t.Fatal(err)
	}
	// The cancel leaves a pending delivery to the config.
	if _, _, err := db.CancelTask(ctx, alice.ID, tk.ID, at); err != nil {
		t.Fatal(err)
	}

	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var n int
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE) t)
		+ (SELECT count(*) FROM (SELECT 1 FROM push_deliveries WHERE task_id = $1 FOR UPDATE) d)
		+ (SELECT count(*) FROM (SELECT 1 FROM push_configs WHERE task_id = $1 FOR UPDATE) c)`, tk.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("locked %d rows of alice's task, want its row, its config and its pending delivery", n)
	}

	// The watcher is a session of its own: one inside a transaction sees
	// pg_stat_activity as it was when the transaction began.
	watch, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)

	mine := cfg
	mine.OwnerID = bob.ID
	for _, c := range []struct {
		name string
		run  func(ctx context.Context) error
		want error
	}{
		{"put a config", func(ctx context.Context) error {
			_, _, err := db.PutPushConfig(ctx, mine, push.MaxConfigsPerTask)
			return err
		}, push.ErrTaskNotFound},
		{"delete a config", func(ctx context.Context) error {
			_, err := db.DeletePushConfig(ctx, bob.ID, tk.ID, cfg.ID, at)
			return err
		}, push.ErrTaskNotFound},
		{"list the configs", func(ctx context.Context) error {
			_, err := db.PushConfigs(ctx, bob.ID, tk.ID)
			return err
		}, push.ErrTaskNotFound},
		{"cancel", func(ctx context.Context) error {
			_, _, err := db.CancelTask(ctx, bob.ID, tk.ID, at)
			return err
		}, tasks.ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := strangerCall(ctx, watch, c.run); !errors.Is(err, c.want) {
				t.Fatalf("bob's command on alice's task: %v, want %v", err, c.want)
			}
		})
	}
}

// strangerCall runs call, failing as soon as any session of the database
// waits on a lock (or when it takes 10 s).
func strangerCall(ctx context.Context, watch *pgx.Conn, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			rows, err := watch.Query(ctx, `SELECT query FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`)
			if err != nil {
				return err
			}
			waiting, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			if len(waiting) > 0 {
				cancel()
				<-done
				return fmt.Errorf("waits on a lock of alice's rows: %s", strings.Join(waiting, "; "))
			}
		}
	}
}
