package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
)

// engine is a store with the services over it, on a fixed clock.
type engine struct {
	db *postgres.DB
	ag *agents.Service
	tk *tasks.Service
	ds *discussions.Service
}

func newEngine(t *testing.T, db *postgres.DB) *engine {
	now := func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) }
	return &engine{db: db, ag: agents.NewService(db, now), tk: tasks.NewService(db, tasks.Limits{}, db.Secret(), now),
		ds: discussions.NewService(db, discussions.Limits{}, db.Secret(), now)}
}

func (e *engine) agent(t *testing.T, name string) agents.Agent {
	t.Helper()
	c, err := e.ag.Create(context.Background(), name, []agents.Scope{agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	return c.Agent
}

func (e *engine) ask(ctx context.Context, a agents.Agent, msgID, join string) (tasks.Task, error) {
	text := "how do I " + msgID + "?"
	in := tasks.AskInput{Asker: tasks.Asker{ID: a.ID, Name: a.Name},
		Message: a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}, Question: text,
		JoinDiscussionID: join}
	tk, _, err := e.tk.Ask(ctx, in)
	return tk, err
}

// TestAskRoundTrips: an ask takes at most 2 round trips to the database
// (BEGIN and the loads, then the writes and COMMIT, or a ROLLBACK for a
// refusal: the bound), counted on the connection itself,
// and nothing else reads or writes around it. A reply is held to the
// same. The first use of a statement on a connection,
// when pgx prepares it, is warmed up first: it happens once per
// connection.
func TestAskRoundTrips(t *testing.T) {
	db := openOneConn(t)
	e := newEngine(t, db)
	ctx := context.Background()
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	first, err := e.ask(ctx, alice, "warm-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ask(ctx, bob, "warm-2", first.DiscussionID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ds.Reply(ctx, discussions.Author{ID: bob.ID, Name: bob.Name}, first.DiscussionID, "warm"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ask(ctx, bob, "warm-3", first.DiscussionID); err == nil {
		t.Fatal("a join of an answered discussion was allowed")
	}
	// newDiscussion is a setup step: a discussion of alice's, made before
	// the command that is counted.
	newDiscussion := func(i int) string {
		d, err := e.ask(ctx, alice, fmt.Sprint("d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		return d.DiscussionID
	}
	for _, tc := range []struct {
		name  string
		cmd   string
		setup func(i int) string
		do    func(i int, disc string) error
		want  uint64
	}{
		{"ask", postgres.CmdAsk, nil, func(i int, _ string) error { _, err := e.ask(ctx, alice, fmt.Sprint("a", i), ""); return err }, 2},
		{"join", postgres.CmdAsk, newDiscussion, func(i int, disc string) error {
			_, err := e.ask(ctx, bob, fmt.Sprint("j", i), disc)
			return err
		}, 2},
		{"refused join", postgres.CmdAsk, nil, func(i int, _ string) error {
			if _, err := e.ask(ctx, bob, fmt.Sprint("r", i), first.DiscussionID); err == nil {
				return fmt.Errorf("a join of an answered discussion was allowed")
			}
			return nil
		}, 2},
		{"reply", postgres.CmdReply, newDiscussion, func(_ int, disc string) error {
			_, err := e.ds.Reply(ctx, discussions.Author{ID: bob.ID, Name: bob.Name}, disc, "answer")
			return err
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var most uint64
			for i := range 10 {
				var disc string
				if tc.setup != nil {
					disc = tc.setup(i)
				}
				before, reads, writes := db.RoundTrips(tc.cmd), db.RoundTrips(postgres.TripsRead), db.RoundTrips(postgres.TripsWrite)
				if err := tc.do(i, disc); err != nil {
					t.Fatal(err)
				}
				after := db.RoundTrips(tc.cmd)
				if after.Commands != before.Commands+1 {
					t.Fatalf("%d commands ran, want 1", after.Commands-before.Commands)
				}
				// The command is the whole of it: no read before or after.
				if r, w := db.RoundTrips(postgres.TripsRead), db.RoundTrips(postgres.TripsWrite); r != reads || w != writes {
					t.Fatalf("%s %d also made %d reads and %d other writes", tc.name, i, r.Commands-reads.Commands, w.Commands-writes.Commands)
				}
				trips := after.Trips - before.Trips
				most = max(most, trips)
				if trips > tc.want {
					t.Fatalf("%s %d took %d round trips, want at most %d", tc.name, i, trips, tc.want)
				}
			}
			t.Logf("%s: at most %d round trips", tc.name, most)
		})
	}
	t.Logf("asks average %.3f round trips, warm-ups included", db.RoundTrips(postgres.CmdAsk).PerCommand())
	if rt := db.RoundTrips(postgres.CmdAsk); rt.PerCommand() > 3 {
		t.Fatalf("asks average %.2f round trips, want at most 3", rt.PerCommand())
	}
}

// TestNoRowEveryWriteWaitsOn: another agent's commands take no row that
// every write takes. One transaction holds a lock on every row of the
// database that is not bob's or carol's (alice's agent, tasks,
// discussions, windows and counters, and whatever rows hold totals); bob
// asks, carol replies to him, bob asks again and cancels: none of them
// may wait on a lock. It polls pg_stat_activity for a backend of this
// database waiting on a lock the holder holds, so it fails at the first
// wait rather than on a timeout. It polls on a connection of its own: in
// the holder's transaction pg_stat_activity is a snapshot taken at its
// first read, which never shows a wait that begins later, and forever
// shows one caught then (the notifier's NOTIFY waiting its turn for the
// cluster's notification queue, which other tests' NOTIFYs hold: no row
// of ours, hence only waits on the holder count).
func TestNoRowEveryWriteWaitsOn(t *testing.T) {
	url := pgtest.URL(t)
	// One connection in the store's pool, made by the setup below, so that
	// the discussion totals' shard of every connection that writes is
	// known when the holder locks the others' (a connection the pool
	// opened later could fall in a locked shard, and wait on it).
	db, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	now := func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) }
	e := newEngine(t, db)
	// Limits on, so that every kind of row a command can write exists.
	e.tk = tasks.NewService(db, tasks.Limits{AskRate: ratelimit.PerMinute(1000), MaxOpen: 1000}, db.Secret(), now)
	e.ds = discussions.NewService(db, discussions.Limits{ReplyRate: ratelimit.PerMinute(1000), MaxReplies: 1000}, db.Secret(), now)
	ctx := context.Background()
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	for i := range 3 {
		d, err := e.ask(ctx, alice, fmt.Sprint("a", i), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.ds.Reply(ctx, discussions.Author{ID: alice.ID, Name: alice.Name}, d.DiscussionID, "details"); err != nil {
			t.Fatal(err)
		}
	}

	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	mine := []string{bob.ID, carol.ID}
	theirs := []string{"t|o|" + bob.ID + "%", "t|o|" + carol.ID + "%"}
	// A discussion total of every status and shard, to be held below.
	if _, err := holder.Exec(ctx, `INSERT INTO discussion_totals (status, shard, n)
		SELECT s, g, 0 FROM unnest(ARRAY['open', 'answered']) s, generate_series(0, 15) g ON CONFLICT DO NOTHING`); err != nil {
		t.Fatal(err)
	}
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, l := range []struct {
		q    string
		args []any
	}{
		{"SELECT 1 FROM agents WHERE id <> ALL($1) FOR UPDATE", []any{mine}},
		{"SELECT 1 FROM rate_windows WHERE agent_id <> ALL($1) FOR UPDATE", []any{mine}},
		{"SELECT 1 FROM tasks WHERE owner_id <> ALL($1) FOR UPDATE", []any{mine}},
		{"SELECT 1 FROM discussions WHERE convert_from(doc, 'UTF8')::jsonb->>'authorId' <> ALL($1) FOR UPDATE", []any{mine}},
		{"SELECT 1 FROM inbox WHERE agent_id <> ALL($1) FOR UPDATE", []any{mine}},
		{"SELECT 1 FROM counters WHERE NOT (name LIKE ANY($1)) FOR UPDATE", []any{theirs}},
		// The discussion totals of every shard but those of the store's
		// own connections (a write moves its connection's shard only).
		{`SELECT 1 FROM discussion_totals WHERE shard <> ALL(ARRAY(SELECT pid % 16 FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid())) FOR UPDATE`, nil},
		{"SELECT 1 FROM kfa_meta FOR UPDATE", nil},
	} {
		if _, err := tx.Exec(ctx, l.q, l.args...); err != nil {
			t.Fatalf("%s: %v", l.q, err)
		}
	}

	done := make(chan error, 1)
	go func() {
		done <- func() error {
			d, err := e.ask(ctx, bob, "b1", "")
			if err != nil {
				return fmt.Errorf("bob's ask: %w", err)
			}
			if _, err := e.ds.Reply(ctx, discussions.Author{ID: carol.ID, Name: carol.Name}, d.DiscussionID, "answer"); err != nil {
				return fmt.Errorf("carol's reply: %w", err)
			}
			d2, err := e.ask(ctx, bob, "b2", "")
			if err != nil {
				return fmt.Errorf("bob's second ask: %w", err)
			}
			if _, _, err := e.tk.Cancel(ctx, bob.ID, d2.ID); err != nil {
				return fmt.Errorf("bob's cancel: %w", err)
			}
			return nil
		}()
	}()
	watcher, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(ctx)
	holderPID := holder.PgConn().PID()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-tick.C:
			var waiting []string
			rows, err := watcher.Query(ctx, `SELECT query FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND $1::int = ANY(pg_blocking_pids(pid))`, holderPID)
			if err != nil {
				t.Fatal(err)
			}
			waiting, err = pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			if len(waiting) > 0 {
				t.Fatalf("bob's and carol's commands wait on a lock of a row that is neither's: %s", strings.Join(waiting, "; "))
			}
		}
	}
}
