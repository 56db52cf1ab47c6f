package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/storetest"
	"github.com/kfa-project/kfa/tasks"
)

// TestMigrateAnswered: migration 11 answers every discussion of a
// database written under the old rule by its earliest visible qualifying
// reply: one answered at a later reply's time gets the earliest's, one
// whose only answer is hidden is open again; the database then passes
// kfa check, and the log tells every process's followers which moved.
func TestMigrateAnswered(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) }
	ag := agents.NewService(db, now)
	tk := tasks.NewService(db, tasks.Limits{}, db.Secret(), now)
	var people []agents.Agent
	for _, n := range []string{"alice", "bob", "carol"} {
		c, err := ag.Create(ctx, n, []agents.Scope{agents.ScopePost})
		if err != nil {
			t.Fatal(err)
		}
		people = append(people, c.Agent)
	}
	alice, bob, carol := people[0], people[1], people[2]
	ask := func(msgID string) string {
		text := "question " + msgID
		task, _, err := tk.Ask(ctx, tasks.AskInput{Asker: tasks.Asker{ID: alice.ID, Name: alice.Name}, Question: text,
			Message: a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}})
		if err != nil {
			t.Fatal(err)
		}
		return task.DiscussionID
	}
	reply := func(who agents.Agent, disc string, at time.Time) discussions.Reply {
		ds := discussions.NewService(db, discussions.Limits{}, db.Secret(), func() time.Time { return at })
		r, err := ds.Reply(ctx, discussions.Author{ID: who.ID, Name: who.Name}, disc, "an answer")
		if err != nil {
			t.Fatal(err)
		}
		return r.Reply
	}
	twice, once := ask("m1"), ask("m2")
	first := reply(bob, twice, now().Add(time.Second))
	later := reply(carol, twice, now().Add(2*time.Second))
	only := reply(bob, once, now().Add(time.Second))
	storetest.Settle(t, db) // so that before is after every event of the fixture
	before, err := db.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// What the old rule could leave: answered at the later reply's time;
	// answered by a hidden reply alone. Then schema 10 again.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE discussions SET doc = convert_to(jsonb_set(convert_from(doc, 'UTF8')::jsonb, '{answeredAt}', to_jsonb($2::text))::text, 'UTF8')
			WHERE id = $1`, []any{twice, a2a.FormatTime(later.CreatedAt)}},
		{`UPDATE replies SET hidden = true, doc = convert_to(jsonb_set(convert_from(doc, 'UTF8')::jsonb, '{hidden}', 'true')::text, 'UTF8')
			WHERE id = $1`, []any{only.ID}},
		{`UPDATE discussions SET doc = convert_to(jsonb_set(convert_from(doc, 'UTF8')::jsonb, '{hiddenReplies}', '1')::text, 'UTF8')
			WHERE id = $1`, []any{once}},
		{"DELETE FROM kfa_schema_migrations WHERE version >= 11", nil},
	} {
		if _, err := conn.Exec(ctx, stmt.sql, stmt.args...); err != nil {
			t.Fatalf("%s: %v", stmt.sql, err)
		}
	}

	db, err = Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rep, err := db.Check(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("check after the migration: %v %+v", err, rep.Violations)
	}
	for _, want := range []struct {
		id     string
		status discussions.Status
		at     time.Time
	}{{twice, discussions.StatusAnswered, first.CreatedAt}, {once, discussions.StatusOpen, time.Time{}}} {
		d, err := db.GetDiscussion(ctx, want.id)
		if err != nil || d.Status != want.status || !d.AnsweredAt.Equal(want.at) {
			t.Fatalf("discussion %s: %s at %s (%v), want %s at %s", want.id, d.Status, d.AnsweredAt, err, want.status, want.at)
		}
	}
	storetest.Settle(t, db) // the log shows an event once no older transaction of the cluster runs
	evs, err := db.ReadLog(ctx, before.Last, 100)
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{}
	for _, e := range evs {
		if e.Kind == changelog.DiscussionChanged && e.Ref == changelog.RefStatus {
			moved[e.ID] = e.Note
		}
	}
	if len(moved) != 2 || moved[twice] != "answered" || moved[once] != "open" {
		t.Fatalf("the migration's events: %+v", evs)
	}
}
