package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
)

// watched opens the store at url with OnTaskChange feeding a channel.
func watched(t *testing.T, url string) (*postgres.DB, chan tasks.Task) {
	t.Helper()
	ch := make(chan tasks.Task, 16)
	db, err := postgres.Open(context.Background(), url, postgres.Options{OnTaskChange: func(tk tasks.Task) { ch <- tk }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, ch
}

func next(t *testing.T, ch chan tasks.Task, what string) tasks.Task {
	t.Helper()
	select {
	case tk := <-ch:
		return tk
	case <-time.After(time.Minute):
		t.Fatalf("no task change: %s", what)
	}
	return tasks.Task{}
}

func none(t *testing.T, ch chan tasks.Task, what string) {
	t.Helper()
	select {
	case tk := <-ch:
		t.Fatalf("%s: an unexpected change of %s (%s)", what, tk.ID, tk.State)
	default:
	}
}

// TestTransitionsReachEveryProcess: a cancel made through one process
// reaches the OnTaskChange of the other (NOTIFY/LISTEN), and its own once;
// after the other's listening connection is cut, it still gets the next
// one (it reconnects and catches up from the database).
func TestTransitionsReachEveryProcess(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	a, changesA := watched(t, url)
	b, changesB := watched(t, url)
	now := func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
	alice, err := agents.NewService(a, now).Create(ctx, "alice", []agents.Scope{agents.ScopeRead, agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	svcA := tasks.NewService(a, tasks.Limits{}, a.Secret(), now)
	svcB := tasks.NewService(b, tasks.Limits{}, b.Secret(), now)
	ask := func(msgID string) tasks.Task {
		text := "question " + msgID
		tk, _, err := svcA.Ask(ctx, tasks.AskInput{
			Asker:    tasks.Asker{ID: alice.Agent.ID, Name: alice.Agent.Name},
			Message:  a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
			Question: text,
		})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}

	first := ask("n1")
	if _, _, err := svcB.Cancel(ctx, alice.Agent.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if got := next(t, changesA, "process A hears of B's cancel"); got.ID != first.ID || got.State != a2a.TaskStateCanceled {
		t.Fatalf("A got %s %s, want %s canceled", got.ID, got.State, first.ID)
	}
	if got := next(t, changesB, "process B hands on its own cancel"); got.ID != first.ID {
		t.Fatalf("B got %s, want %s", got.ID, first.ID)
	}
	none(t, changesB, "B's own cancel is handed on once")

	// Cut every listening connection; B's next cancel must still reach A.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	second := ask("n2")
	if _, _, err := svcB.Cancel(ctx, alice.Agent.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for !seen[second.ID] {
		seen[next(t, changesA, "process A hears of B's cancel after its listener reconnects").ID] = true
	}
	// (B's own listener catches up too, and may hand on its own cancels
	// again after the cut: a repeated transition is harmless.)
}
