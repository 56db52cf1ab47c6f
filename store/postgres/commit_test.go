package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
)

// commitUnknown tells whether err says that a write's outcome is unknown
// (the mark the bindings answer 503 for, with what a client should do).
func commitUnknown(err error) bool {
	var u interface {
		CommitUnknown() bool
		Unavailable() bool
	}
	return errors.As(err, &u) && u.CommitUnknown() && u.Unavailable()
}

// TestCommitOutcomeUnknown: the connection dies right after the server
// committed, before kfa hears of it (a proxy drops the COMMIT's answer).
// The write is not answered as a success: its error says the outcome is
// unknown, and is a 503 one. It is not run again either: the reply is
// stored once, and its task completed once. An ask cut so is stored, and
// a retry with its messageId is answered with the same task.
func TestCommitOutcomeUnknown(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := newEngine(t, db)
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")

	proxy.CutAtCommit()
	_, err = e.ask(ctx, alice, "cut-ask", "")
	if !commitUnknown(err) || proxy.Cuts() != 1 {
		t.Fatalf("an ask whose COMMIT went unanswered: %v (%d cuts), want an unknown outcome", err, proxy.Cuts())
	}
	tk, err := e.ask(ctx, alice, "cut-ask", "")
	if err != nil {
		t.Fatalf("the ask again, with its messageId: %v", err)
	}
	count := func(q string, args ...any) int {
		t.Helper()
		conn, err := pgx.Connect(ctx, direct)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("SELECT count(*) FROM tasks WHERE owner_id = $1 AND message_id = 'cut-ask'", alice.ID); n != 1 {
		t.Fatalf("%d tasks for one ask cut at its COMMIT and asked again, want 1", n)
	}

	proxy.CutAtCommit()
	_, err = e.ds.Reply(ctx, discussions.Author{ID: bob.ID, Name: bob.Name}, tk.DiscussionID, "an answer")
	if !commitUnknown(err) || proxy.Cuts() != 2 {
		t.Fatalf("a reply whose COMMIT went unanswered: %v, want an unknown outcome", err)
	}
	if n := count("SELECT count(*) FROM replies WHERE discussion_id = $1", tk.DiscussionID); n != 1 {
		t.Fatalf("%d replies stored for one reply cut at its COMMIT, want 1 (it committed, and ran once)", n)
	}
	got, err := e.tk.Get(ctx, alice.ID, tk.ID)
	if err != nil || got.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("the task after the reply: %v %v, want completed", got.State, err)
	}
}
