package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/store/transfer"
	"github.com/kfa-project/kfa/tasks"
)

// addEveryKind stops nothing: it opens the stopped data directory's file
// and adds what the fixture's requests did not make (records and their
// feed, a push config and the delivery a cancel queues, a signing key, a
// web session, an agent linked to an OAuth identity).
func addEveryKind(t *testing.T, f *fixture) {
	t.Helper()
	mustCLI(t, "", "records", "import", "../../samples/records.jsonl", "--data", f.dir)
	db, err := store.Open(filepath.Join(f.dir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	now := time.Now().UTC()
	page, err := db.ListRecords(ctx, "", 1)
	if err != nil || len(page.Records) == 0 {
		t.Fatalf("records: %+v %v", page, err)
	}
	if err := db.DeleteRecord(ctx, page.Records[0].ID, now); err != nil {
		t.Fatal(err)
	}
	c := push.Config{ID: "cfg-1", TaskID: f.waiting.ID, OwnerID: f.alice.ID, URL: "https://hooks.example/kfa",
		Token: "tok", CreatedAt: now}
	if _, _, err := db.PutPushConfig(ctx, c, 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CancelTask(ctx, f.alice.ID, f.waiting.ID, now.Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// A flag that reaches a threshold of one hides bob's question: an
	// item, a flag and two entries of the moderation log.
	mod := moderation.NewService(db, moderation.Policy{HideThreshold: 1}, time.Now)
	if _, err := mod.Flag(ctx, moderation.Agent{ID: f.alice.ID, Name: "alice"},
		moderation.Target{Kind: moderation.KindDiscussion, ID: discussionOf(t, f.bobs)}, "off-topic", "a test"); err != nil {
		t.Fatal(err)
	}
	k, err := signing.NewKey(now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureSigningKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	id := agents.Identity{Issuer: "https://idp.example.com", Subject: "svc-build"}
	if _, _, err := db.ProvisionAgent(ctx, agents.Provision{Identity: id, Names: agents.ProvisionNames("build-bot", id),
		Agent: agents.Agent{ID: "01JD0000000000000000000099", Scopes: agents.ProvisionScopes, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	sess := sessions.Session{AgentID: f.alice.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	sess.Digest[0], sess.Credential[0] = 1, 2
	if err := db.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
}

func dumpFile(t *testing.T, path string) *transfer.Data {
	t.Helper()
	db, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := db.Dump()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tasksOf reads every task of owner through GetTask and ListTasks.
func tasksOf(t *testing.T, path, owner string) ([]tasks.Task, []tasks.Task) {
	t.Helper()
	db, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	page, err := db.ListTasks(ctx, tasks.ListQuery{OwnerID: owner, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []tasks.Task
	for _, tk := range page.Tasks {
		g, err := db.GetTask(ctx, "", tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, g)
	}
	return page.Tasks, got
}

// TestMigrateRoundTrip: bbolt -> PostgreSQL -> bbolt keeps everything:
// the whole dump, the records export bytes, every agent's tasks, and the
// result passes kfa check. A second copy into the same database is
// refused, naming what it holds; the password is never printed.
func TestMigrateRoundTrip(t *testing.T) {
	pg := pgtest.URL(t)
	f := newFixture(t)
	// alice answers bob: bob's task completes, and his inbox gets an
	// entry he has not acknowledged
	ac := client.New(f.srv.url, client.WithToken(f.alice.Token))
	if _, err := ac.Reply(context.Background(), discussionOf(t, f.bobs), "See the inbox docs."); err != nil {
		t.Fatal(err)
	}
	f.srv.stop()
	addEveryKind(t, f)
	src := filepath.Join(f.dir, store.FileName)
	before := dumpFile(t, src)
	for _, c := range before.Counts() {
		if c.N == 0 {
			t.Errorf("the source has no %s: the round trip would not test them", c.Kind)
		}
	}

	out := mustCLI(t, "", "migrate", "--data", f.dir, "--to", pg)
	if !strings.Contains(out, "tasks") || !strings.Contains(out, "web sessions") {
		t.Errorf("no counts printed:\n%s", out)
	}
	if pw := passwordOf(pg); pw != "" && strings.Contains(out, pw) {
		t.Errorf("the password is printed:\n%s", out)
	}
	r := kfa(t, "migrate", "--data", f.dir, "--to", pg)
	if r.code == 0 || !strings.Contains(r.stderr, "already holds kfa data") || !strings.Contains(r.stderr, "rows in agents") {
		t.Errorf("a second copy into the same database: %s", r)
	}

	back := filepath.Join(shortTempDir(t), "back")
	mustCLI(t, "", "migrate", "--from", pg, "--to", filepath.Join(back, store.FileName))
	r = kfa(t, "migrate", "--from", pg, "--to", filepath.Join(back, store.FileName))
	if r.code == 0 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("a copy over an existing file: %s", r)
	}
	after := dumpFile(t, filepath.Join(back, store.FileName))
	for i := range before.Feed { // PostgreSQL keeps a written time for every entry
		if before.Feed[i].Written.IsZero() {
			before.Feed[i].Written = before.Feed[i].At
		}
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the round trip changed the data:\nbefore %+v\nafter  %+v", before, after)
	}

	exp := filepath.Dir(back)
	mustCLI(t, "", "records", "export", filepath.Join(exp, "a.jsonl"), "--data", f.dir)
	mustCLI(t, "", "records", "export", filepath.Join(exp, "b.jsonl"), "--data", back)
	a, _ := os.ReadFile(filepath.Join(exp, "a.jsonl"))
	b, _ := os.ReadFile(filepath.Join(exp, "b.jsonl"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("records export differs: %d and %d bytes", len(a), len(b))
	}
	for _, ag := range []string{f.alice.ID, f.bob.ID} {
		l1, g1 := tasksOf(t, src, ag)
		l2, g2 := tasksOf(t, filepath.Join(back, store.FileName), ag)
		if len(l1) == 0 || !reflect.DeepEqual(l1, l2) || !reflect.DeepEqual(g1, g2) {
			t.Errorf("agent %s's tasks differ:\n%+v\n%+v", ag, g1, g2)
		}
	}
	if out := mustCLI(t, "", "check", "--data", back); !strings.HasPrefix(out, "OK:") {
		t.Errorf("kfa check on the copy:\n%s", out)
	}
}

func passwordOf(u string) string {
	at := strings.LastIndex(u, "@")
	colon := strings.LastIndex(u[:max(at, 0)], ":")
	if at < 0 || colon < 0 {
		return ""
	}
	return u[colon+1 : at]
}

// TestCheckPostgres: kfa check --store on the copy of a real database is
// clean; each broken row is then named, with the exit status 1.
func TestCheckPostgres(t *testing.T) {
	pg := pgtest.URL(t)
	f := newFixture(t)
	f.srv.stop()
	addEveryKind(t, f)
	mustCLI(t, "", "migrate", "--data", f.dir, "--to", pg)
	if out := mustCLI(t, "", "check", "--store", pg); !strings.HasPrefix(out, "OK: postgresql") {
		t.Fatalf("kfa check on a clean copy:\n%s", out)
	}
	conn, err := pgx.Connect(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, c := range []struct {
		name, breaks, kind, table, want string
	}{
		{"counter", "UPDATE counters SET n = n + 1 WHERE name = (SELECT min(name) FROM counters WHERE name LIKE 't|o|%')",
			"counter", "counters", ", counted "},
		{"working task of an answered discussion", "UPDATE tasks SET state = 'TASK_STATE_WORKING' WHERE id = '" + f.done.ID + "'",
			"completion", "tasks", "still working, but qualifying reply"},
		{"answer time not the earliest answer's", "UPDATE discussions SET doc = convert_to(jsonb_set(convert_from(doc, 'UTF8')::jsonb, '{answeredAt}', '\"2099-01-01T00:00:00Z\"')::text, 'UTF8') WHERE status = 'answered'",
			"discussion", "discussions", "the earliest visible qualifying reply is from"},
		{"completing reply gone", "UPDATE tasks SET state = 'TASK_STATE_COMPLETED' WHERE id = '" + f.done.ID + "'; DELETE FROM replies WHERE discussion_id = '" + discussionOf(t, f.done) + "'",
			"completion", "tasks", "which is not on discussion"},
		{"inbox entry without its reply", "", "inbox", "inbox", "which does not exist"},
		{"session of no agent", "UPDATE web_sessions SET doc = convert_to(jsonb_set(convert_from(doc, 'UTF8')::jsonb, '{agentId}', '\"01AAAAAAAAAAAAAAAAAAAAAAAA\"')::text, 'UTF8')",
			"session", "web_sessions", "session of agent 01AAAAAAAAAAAAAAAAAAAAAAAA, which does not exist"},
		{"outbox entry of no config", "DELETE FROM push_configs", "push", "push_deliveries", "points at config"},
		{"linked agent without its identity", "DELETE FROM agent_identities", "agent", "agents", "which agent_identities does not map to it"},
	} {
		for _, stmt := range strings.Split(c.breaks, "; ") {
			if stmt == "" {
				continue
			}
			if _, err := conn.Exec(context.Background(), stmt); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		r := kfa(t, "check", "--store", pg)
		if r.code != 1 || !strings.Contains(r.stdout, "FAILED: postgresql") {
			t.Fatalf("%s: %s", c.name, r)
		}
		rep := decodeCheck(t, pg)
		found := false
		for _, v := range rep.Violations {
			found = found || v.Kind == c.kind && v.Bucket == c.table && strings.Contains(v.Detail, c.want)
		}
		if !found {
			t.Errorf("%s: no %s violation on %s saying %q: %+v", c.name, c.kind, c.table, c.want, rep.Violations)
		}
	}
}

func decodeCheck(t *testing.T, pg string) api.CheckReport {
	t.Helper()
	r := kfa(t, "check", "--store", pg, "--json")
	var rep api.CheckReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 1 || rep.OK {
		t.Fatalf("kfa check --json: %v %s", err, r)
	}
	return rep
}
