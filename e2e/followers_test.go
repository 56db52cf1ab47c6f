package e2e

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
)

// followWithin is how soon a write made through one process must reach
// another's followers (issue 24; product.md "One engine").
const followWithin = time.Second

// caughtUp waits until h's followers of the change log have applied every
// change committed before the call, by any process, and fails t when that
// took longer than followWithin.
func caughtUp(t *testing.T, h *harness, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a measure
	defer cancel()
	start := time.Now()
	if err := h.srv.SyncFollowers(ctx); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	took := time.Since(start)
	if took > followWithin {
		t.Fatalf("%s: the other process took %s to follow, more than %s", what, took, followWithin)
	}
	t.Logf("%s: followed %s after the write returned", what, took.Round(time.Millisecond))
}

// searchFinds reports whether a search for q on h lists id.
func searchFinds(t *testing.T, h *harness, q, id string) bool {
	t.Helper()
	return slices.Contains(a2aSearchIDs(t, h, map[string]any{"query": q, "limit": 5}), id)
}

// TestPostgresSearchAcrossProcesses: two kfa serve on one PostgreSQL
// database; an ask, a reply to the open discussion, a later reply to the
// answered one, and a record import, each made through A, are found by
// B's own search index within a second (it follows the change log; before,
// B saw A's asks only through a full reconcile, and a later reply never).
func TestPostgresSearchAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	a := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0 })
	b := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0 })
	ctx := context.Background()
	_, alice := a.agent("alice")
	_, bob := a.agent("bob")

	question := "How do I defragment a narwhal ledger file?"
	tk := a.ask(alice, "across-1", question)
	disc := discussionOf(t, tk)
	caughtUp(t, b, "an ask on A")
	if !searchFinds(t, b, question, disc) {
		t.Fatalf("B's search does not find the open discussion asked on A")
	}

	if _, err := bob.Reply(ctx, disc, "Run the compactor on the narwhal ledger."); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, b, "a reply on A")
	if !searchFinds(t, b, "narwhal ledger compactor", disc) {
		t.Fatalf("B's search does not find the discussion answered on A")
	}

	if _, err := bob.Reply(ctx, disc, "Or copy it with the walrus tool first."); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, b, "a later reply to an answered discussion on A")
	if !searchFinds(t, b, "walrus tool narwhal", disc) {
		t.Fatalf("B's search does not find the later reply to the answered discussion")
	}

	line := `{"id":"across-rec","kind":"fix","title":"Tune the okapi cache","body":"Imported through process A."}` + "\n"
	if _, err := a.admin.ImportRecords(ctx, strings.NewReader(line), true); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, b, "a record import on A")
	if !searchFinds(t, b, "okapi cache", "across-rec") {
		t.Fatalf("B's search does not find the record imported on A")
	}
}

// TestPostgresRevokeAcrossProcesses: an agent revoked (or rotated without
// grace) through A is refused on B within a second, although B had its
// token cached, and the agent's open stream on B ends (issue 25 point 15).
func TestPostgresRevokeAcrossProcesses(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(h *harness, id string) error
	}{
		{"revoke", func(h *harness, id string) error { _, err := h.admin.RevokeAgent(context.Background(), id); return err }},
		{"rotate without grace", func(h *harness, id string) error {
			_, err := h.admin.RotateAgent(context.Background(), id, 0)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := pgtest.URL(t) // a database each: both cases make the same agents
			a := start(t, func(c *server.Config) { c.Store = url })
			b := start(t, func(c *server.Config) { c.Store = url })
			endsOnB(t, a, b, tc.end)
		})
	}
}

// TestRevokeEndsStreams: on one process too, a revocation ends the
// agent's open streams and refuses its token at once.
func TestRevokeEndsStreams(t *testing.T) {
	h := start(t, nil)
	endsOnB(t, h, h, func(h *harness, id string) error { _, err := h.admin.RevokeAgent(context.Background(), id); return err })
}

// endsOnB makes an agent through a, has b cache its token and hold a
// stream of it, ends its credentials through a with end, and checks that b
// refuses the token and ends the stream.
func endsOnB(t *testing.T, a, b *harness, end func(h *harness, id string) error) {
	t.Helper()
	ctx := context.Background()
	carol, _ := a.agent("carol")
	onB := b.anon.WithToken(carol.Token)
	if _, err := onB.Whoami(ctx); err != nil { // B caches the token
		t.Fatal(err)
	}
	if _, err := onB.Whoami(ctx); err != nil {
		t.Fatal(err)
	}
	body := `{"message":{"role":"ROLE_USER","messageId":"revoked-1","parts":[{"data":{"action":"ask","question":"will my stream outlive my token?"}}]}}`
	s := openSSE(t, http.DefaultClient, "POST", b.url+"/a2a/v1/message:stream", a2aHeaders(carol.Token), body)
	if ev := decodeEvent(t, s.next(t)); ev.Task == nil {
		t.Fatalf("first event: %+v", ev)
	}
	if err := end(a, carol.ID); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, b, "the end of the credentials")
	_, err := onB.Whoami(ctx)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the old token on B after it ended: %v, want 401", err)
	}
	s.ended(t)
}
