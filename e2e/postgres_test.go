package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
)

// waitFor polls cond until it holds, failing t after a generous deadline
// (a slow machine only waits longer).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPostgresTwoProcesses: two kfa serve on one PostgreSQL database share
// their data: an agent made on A works on B, an ask made on A is
// completed by a reply on B, and records imported on A are found by B's
// own search index, which follows the shared change feed.
func TestPostgresTwoProcesses(t *testing.T) {
	url := pgtest.URL(t)
	a := start(t, func(c *server.Config) { c.Store = url })
	b := start(t, func(c *server.Config) { c.Store = url })
	ctx := context.Background()

	alice, _ := a.agent("alice")
	_, bobOnB := b.agent("bob")
	aliceOnB := b.anon.WithToken(alice.Token)
	tk := a.ask(a.anon.WithToken(alice.Token), "two-1", "how do two processes share one database?")
	if _, err := bobOnB.Reply(ctx, discussionOf(t, tk), "through PostgreSQL"); err != nil {
		t.Fatal(err)
	}
	got, err := aliceOnB.GetTask(ctx, tk.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task asked on A, answered on B, read on B: %s", got.Status.State)
	}

	line := `{"id":"pg-shared","kind":"fix","title":"Shared feed xylophone","body":"Imported through process A."}` + "\n"
	if _, err := a.admin.ImportRecords(ctx, strings.NewReader(line), true); err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, b, "")
	waitFor(t, "process B's index to find the record imported on A", func() bool {
		for _, r := range mcpSearch(t, cs, map[string]any{"query": "xylophone"}) {
			if r.ID == "pg-shared" {
				return true
			}
		}
		return false
	})
}

// TestPostgresReadyz: /readyz answers 503 while the database refuses
// connections, and 200 again once it is back, without a restart.
func TestPostgresReadyz(t *testing.T) {
	url := pgtest.URL(t)
	h := start(t, func(c *server.Config) { c.Store = url })
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	admin := func(stmt string) {
		t.Helper()
		conn, err := pgx.Connect(context.Background(), os.Getenv(pgtest.EnvURL))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	ready := func() int {
		resp, _ := h.raw("GET", "/readyz", nil, "")
		return resp.StatusCode
	}
	if code := ready(); code != http.StatusOK {
		t.Fatalf("/readyz %d at start", code)
	}
	admin("ALTER DATABASE " + db + " ALLOW_CONNECTIONS false")
	admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db + "'")
	waitFor(t, "/readyz to answer 503 with the database refusing connections", func() bool {
		return ready() == http.StatusServiceUnavailable
	})
	admin("ALTER DATABASE " + db + " ALLOW_CONNECTIONS true")
	waitFor(t, "/readyz to answer 200 with the database back", func() bool { return ready() == http.StatusOK })
}

// TestPostgresStartErrors: a server that cannot use its database does not
// start, and says why without the password.
func TestPostgresStartErrors(t *testing.T) {
	url := pgtest.URL(t)
	wrongPassword, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	wrongPassword.User = neturl.UserPassword(wrongPassword.User.Username(), "s3cretpw")
	for _, tc := range []struct{ name, url, want string }{
		{"wrong password", wrongPassword.String(), "password authentication failed"},
		{"unreachable", "postgres://kfa:s3cretpw@127.0.0.1:1/kfa?connect_timeout=5", "connect"},
		{"malformed", "postgres://kfa:s3cretpw@127.0.0.1:port/kfa", "malformed database URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := server.DefaultConfig()
			cfg.Addr, cfg.DataDir, cfg.Store = "127.0.0.1:0", t.TempDir(), tc.url
			srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
			if err == nil {
				_ = srv.Shutdown(context.Background())
				t.Fatal("the server started")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cretpw") {
				t.Fatalf("err %q: want %q, and never the password", err, tc.want)
			}
		})
	}
}

// TestPostgresEventsAcrossProcesses: an ask streamed from process A is
// completed by a reply made on process B, and A's stream gets the
// completion (B's commit NOTIFYs, A LISTENs); a push config set through A
// is delivered for the completion B made, exactly once although both
// processes' workers send from the shared outbox (claims).
func TestPostgresEventsAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	recv := newReceiver(t, nil)
	pushOK := func(c *server.Config) { c.Store = url; c.PushAllow = []string{"127.0.0.1"} }
	a := start(t, pushOK)
	b := start(t, pushOK)
	ctx := context.Background()
	alice, aliceOnA := a.agent("alice")
	_, bobOnB := b.agent("bob")

	body := `{"message":{"role":"ROLE_USER","messageId":"x-1","parts":[{"data":{"action":"ask","question":"streamed on A, answered on B?"}}]}}`
	s := openSSE(t, http.DefaultClient, "POST", a.url+"/a2a/v1/message:stream", a2aHeaders(alice.Token), body)
	first := decodeEvent(t, s.next(t))
	if first.Task == nil || first.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event: %+v", first)
	}
	res, err := aliceOnA.SendMessage(ctx, askWithPush("x-2", "pushed from A, answered on B?", map[string]any{"url": recv.url() + "/hook"}))
	if err != nil {
		t.Fatal(err)
	}
	pushed := *res.Task

	if _, err := bobOnB.Reply(ctx, discussionOf(t, *first.Task), "answered on B"); err != nil {
		t.Fatal(err)
	}
	decodeEvent(t, s.next(t)) // artifact
	if ev := decodeEvent(t, s.next(t)); ev.StatusUpdate == nil || ev.StatusUpdate.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("A's stream, final event: %+v", ev)
	}
	s.ended(t)

	if _, err := bobOnB.Reply(ctx, discussionOf(t, pushed), "answered on B too"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the completion's delivery to be recorded delivered", func() bool {
		l, err := b.admin.Deliveries(ctx, client.DeliveryQuery{TaskID: pushed.ID, State: "delivered"})
		return err == nil && len(l.Deliveries) == 1
	})
	// Both processes' workers saw the delivery due; each claims before it
	// sends, so exactly one sent it.
	if n := len(recv.got()); n != 1 {
		t.Fatalf("the receiver got %d requests, want exactly 1", n)
	}
	var ev a2a.StreamResponse
	if err := json.Unmarshal(recv.got()[0].body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.StatusUpdate == nil || ev.StatusUpdate.TaskID != pushed.ID || ev.StatusUpdate.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("pushed event: %s", recv.got()[0].body)
	}
}

// TestPostgresLimitsAcrossProcesses: the open-task cap and the ask rate are
// counted in the database, so asks split over two processes, all at
// once, keep them: exactly the cap's worth are created.
func TestPostgresLimitsAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	for _, tc := range []struct {
		name   string
		limits func(*server.Config)
	}{
		{"open-task cap", func(c *server.Config) { c.MaxOpenTasks = 3 }},
		{"ask rate", func(c *server.Config) { c.AskRate = 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := func(c *server.Config) { c.Store = url; tc.limits(c) }
			a, b := start(t, mutate), start(t, mutate)
			alice, _ := a.agent("alice-" + strings.ReplaceAll(tc.name, " ", "-"))
			clients := []*client.Client{a.anon.WithToken(alice.Token), b.anon.WithToken(alice.Token)}
			const asks = 12
			errs := make(chan error, asks)
			for i := range asks {
				go func() {
					_, err := clients[i%2].SendMessage(bg(), askReq(fmt.Sprintf("lim-%d", i), fmt.Sprintf("question %d", i), nil))
					errs <- err
				}()
			}
			created := 0
			for range asks {
				err := <-errs
				var ce *client.Error
				switch {
				case err == nil:
					created++
				case errors.As(err, &ce) && (ce.StatusCode == 429 || ce.StatusCode == 400):
				default:
					t.Fatalf("ask: %v", err)
				}
			}
			if created != 3 {
				t.Fatalf("%d asks created over two processes, want 3", created)
			}
		})
	}
}

// TestPostgresAdminOps: kfa stats works on PostgreSQL (from the
// counters); kfa check runs the PostgreSQL invariants (clean here); kfa
// backup, a bbolt file operation, answers a clear error rather than a
// wrong answer.
func TestPostgresAdminOps(t *testing.T) {
	url := pgtest.URL(t)
	h := start(t, func(c *server.Config) { c.Store = url })
	ctx := context.Background()
	alice, ac := h.agent("alice")
	h.ask(ac, "ops-1", "what do the stats say?")
	st, err := h.admin.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Agents != 1 || st.Tasks.Total != 1 || st.Tasks.ByState[string(a2a.TaskStateWorking)] != 1 ||
		st.Discussions.Open != 1 || st.Tasks.OldestWaiting == nil || st.Tasks.OldestWaiting.OwnerID != alice.ID {
		t.Fatalf("stats on PostgreSQL: %+v", st)
	}
	if rep, err := h.admin.Check(ctx, false); err != nil || !rep.OK || rep.Examined["tasks"] != 1 {
		t.Fatalf("check on PostgreSQL: %+v %v", rep, err)
	}
	if _, err := h.admin.Backup(ctx, io.Discard); err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Fatalf("backup on PostgreSQL: %v", err)
	}
}
