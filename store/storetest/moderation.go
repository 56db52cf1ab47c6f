package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

// operator is the actor of the cases' moderator actions.
var operator = moderation.Actor{Kind: moderation.ActorOperator, Name: "storetest"}

// mod is a moderation service over e's store, on e's clock.
func (e *env) mod(p moderation.Policy) *moderation.Service {
	return moderation.NewService(e.store, p, e.clock.Now)
}

// answered makes alice's question answered by bob: the task, the
// discussion and bob's reply.
func (e *env) answered(t *testing.T, alice, bob agents.Agent, msgID string) (tasks.Task, discussions.ReplyResult) {
	t.Helper()
	tk := e.ask(t, alice, msgID)
	e.clock.Advance(time.Second)
	r := e.reply(t, bob, tk.DiscussionID, "answer to "+msgID)
	return tk, r
}

// logHead is the newest position of the change log, once every event
// written before is readable (on PostgreSQL, an event is readable once no
// older transaction of the cluster runs: other tests' may, and the head
// read before would lag behind events already committed).
func (e *env) logHead(t *testing.T) changelog.Position {
	t.Helper()
	Settle(t, e.store)
	st, err := e.store.LogState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Last
}

// eventsSince are the log's events after pos, once all are readable.
func (e *env) eventsSince(t *testing.T, pos changelog.Position) []changelog.Event {
	t.Helper()
	Settle(t, e.store)
	evs, err := e.store.ReadLog(context.Background(), pos, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// auditLog is the whole audit log, newest first.
func (e *env) auditLog(t *testing.T, m *moderation.Service) []moderation.Entry {
	t.Helper()
	var out []moderation.Entry
	token := ""
	for {
		p, err := m.Log(context.Background(), ptr(2), token)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Entries...)
		if token = p.Next; token == "" {
			return out
		}
	}
}

func flagger(a agents.Agent) moderation.Agent { return moderation.Agent{ID: a.ID, Name: a.Name} }

func replyTarget(r discussions.Reply) moderation.Target {
	return moderation.Target{Kind: moderation.KindReply, ID: r.ID, DiscussionID: r.DiscussionID}
}

// testFlagOnce: an agent flags an item once; again, it is told so, and
// nothing is written or spent.
func testFlagOnce(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	_, r := e.answered(t, a, b, "m1")
	m := e.mod(moderation.Policy{HideThreshold: 3, Rate: ratelimit.PerMinute(1)})
	res, err := m.Flag(ctx, flagger(c), replyTarget(r.Reply), "wrong", "it says the opposite of the docs")
	if err != nil || res.AlreadyFlagged || res.Hidden || res.ItemID != r.Reply.ID {
		t.Fatalf("first flag: %+v %v", res, err)
	}
	head := e.logHead(t)
	// Again, at once: the rate of one a minute would refuse a second flag,
	// but a repeat is answered before the rate and spends nothing.
	res, err = m.Flag(ctx, flagger(c), replyTarget(r.Reply), "spam", "")
	if err != nil || !res.AlreadyFlagged {
		t.Fatalf("second flag: %+v %v", res, err)
	}
	if evs := e.eventsSince(t, head); len(evs) != 0 {
		t.Fatalf("a repeated flag wrote events: %+v", evs)
	}
	q, n, err := m.Queue(ctx, nil)
	if err != nil || n != 1 || len(q) != 1 || q[0].Item.Flags != 1 || len(q[0].Flags) != 1 || q[0].Flags[0].Reason != moderation.ReasonWrong ||
		q[0].Flags[0].Note != "it says the opposite of the docs" || q[0].Reply == nil || q[0].Reply.ID != r.Reply.ID {
		t.Fatalf("queue: %+v (%d) %v", q, n, err)
	}
	if log := e.auditLog(t, m); len(log) != 1 || log[0].Action != moderation.ActionFlag || log[0].Actor.ID != c.ID {
		t.Fatalf("audit log: %+v", log)
	}
	// The rate: carol's flag on the question, a second within the
	// minute, is refused; a minute later it goes through.
	qt := moderation.Target{Kind: moderation.KindDiscussion, ID: r.Reply.DiscussionID}
	_, err = m.Flag(ctx, flagger(c), qt, "off-topic", "")
	errIs(t, err, moderation.ErrFlagRate, "a second flag within the minute")
	e.clock.Advance(time.Minute)
	if _, err := m.Flag(ctx, flagger(c), qt, "off-topic", ""); err != nil {
		t.Fatalf("a flag after the minute: %v", err)
	}
}

// testFlagRefusals: flags readers could not make (own content, hidden
// or unknown items, a reply named on another discussion) are refused
// and write nothing.
func testFlagRefusals(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	tk, r := e.answered(t, a, b, "m1")
	other := e.ask(t, a, "m2")
	m := e.mod(moderation.Policy{HideThreshold: 3})
	hiddenD := e.ask(t, c, "m3")
	if _, err := m.Hide(ctx, operator, moderation.Target{ID: hiddenD.DiscussionID}, "spam"); err != nil {
		t.Fatal(err)
	}
	head := e.logHead(t)
	for _, tc := range []struct {
		name string
		who  agents.Agent
		t    moderation.Target
		want error
	}{
		{"own question", a, moderation.Target{Kind: moderation.KindDiscussion, ID: tk.DiscussionID}, moderation.ErrOwnContent},
		{"own reply", b, replyTarget(r.Reply), moderation.ErrOwnContent},
		{"unknown discussion", c, moderation.Target{Kind: moderation.KindDiscussion, ID: "01JD0000000000000000000000"}, discussions.ErrNotFound},
		{"malformed id", c, moderation.Target{Kind: moderation.KindDiscussion, ID: "nope"}, discussions.ErrNotFound},
		{"unknown reply", c, moderation.Target{Kind: moderation.KindReply, ID: "01JD0000000000000000000000", DiscussionID: tk.DiscussionID},
			discussions.ErrReplyNotFound},
		{"a reply named on another discussion", c, moderation.Target{Kind: moderation.KindReply, ID: r.Reply.ID, DiscussionID: other.DiscussionID},
			discussions.ErrReplyNotFound},
		{"a hidden discussion", b, moderation.Target{Kind: moderation.KindDiscussion, ID: hiddenD.DiscussionID}, discussions.ErrNotFound},
	} {
		_, err := m.Flag(ctx, flagger(tc.who), tc.t, "spam", "")
		errIs(t, err, tc.want, tc.name)
	}
	for _, tc := range []struct{ name, reason, note string }{
		{"unknown reason", "rude", ""},
		{"a note over its limit", "spam", string(make([]byte, moderation.MaxNoteLen+1))},
	} {
		if _, err := m.Flag(ctx, flagger(c), replyTarget(r.Reply), tc.reason, tc.note); err == nil {
			t.Fatalf("%s: accepted", tc.name)
		}
	}
	if evs := e.eventsSince(t, head); len(evs) != 0 {
		t.Fatalf("refused flags wrote events: %+v", evs)
	}
	if q, n, err := m.Queue(ctx, nil); err != nil || n != 0 || len(q) != 0 {
		t.Fatalf("queue after refusals: %+v (%d) %v", q, n, err)
	}
}

// testFlagThreshold: the third distinct agent's flag hides a reply:
// readers no longer see it (pages, counts), the accepted mark goes, the
// task it completed keeps its artifact; dismissing the flags shows it
// again with its mark.
func testFlagThreshold(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk, r := e.answered(t, a, b, "m1")
	e.clock.Advance(time.Second)
	r2 := e.reply(t, e.agent(t, "zed"), tk.DiscussionID, "a second answer")
	if _, err := e.ds.Accept(ctx, a.ID, tk.DiscussionID, r.Reply.ID); err != nil {
		t.Fatal(err)
	}
	m := e.mod(moderation.Policy{HideThreshold: 3})
	for i, name := range []string{"carol", "dave", "erin"} {
		e.clock.Advance(time.Second)
		res, err := m.Flag(ctx, flagger(e.agent(t, name)), replyTarget(r.Reply), "spam", "")
		if err != nil || res.Hidden != (i == 2) {
			t.Fatalf("flag %d: %+v %v", i, res, err)
		}
	}
	d, page, err := e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || d.VisibleReplies() != 1 || len(page.Replies) != 1 || page.Replies[0].ID != r2.Reply.ID || d.AcceptedReplyID != "" {
		t.Fatalf("after the hide: %+v %+v %v", d, page.Replies, err)
	}
	if _, err := e.store.GetReply(ctx, tk.DiscussionID, r.Reply.ID); err != nil {
		t.Fatalf("the hidden reply is kept: %v", err)
	}
	done := e.task(t, tk.ID)
	if done.State != a2a.TaskStateCompleted || len(done.Artifacts) != 1 || *done.Artifacts[0].Parts[0].Text != r.Reply.Body {
		t.Fatalf("the task the hidden reply completed changed: %s %+v", done.State, done.Artifacts)
	}
	_, all, err := e.ds.Review(ctx, tk.DiscussionID, nil, "")
	if err != nil || len(all.Replies) != 2 || !all.Replies[0].Hidden {
		t.Fatalf("a moderator's view: %+v %v", all.Replies, err)
	}
	q, n, err := m.Queue(ctx, nil)
	if err != nil || n != 1 || q[0].Item.Hidden != moderation.HiddenByFlags || q[0].Item.Flags != 3 || len(q[0].Flags) != 3 {
		t.Fatalf("queue: %+v (%d) %v", q, n, err)
	}
	log := e.auditLog(t, m)
	if len(log) != 4 || log[0].Action != moderation.ActionHide || log[0].Actor.Kind != moderation.ActorFlags || log[0].Reason != "3 flags: spam 3" {
		t.Fatalf("audit log: %+v", log)
	}
	// A fourth flag on the hidden reply is refused: readers cannot see it.
	_, err = m.Flag(ctx, flagger(e.agent(t, "frank")), replyTarget(r.Reply), "spam", "")
	errIs(t, err, discussions.ErrReplyNotFound, "a flag on a hidden reply")

	// The flags were wrong: dismissing them shows the reply, with its mark.
	res, err := m.Dismiss(ctx, operator, moderation.Target{ID: r.Reply.ID}, "")
	if err != nil || !res.Changed || res.Hidden || res.ItemKind != moderation.KindReply || res.Flags != 3 {
		t.Fatalf("dismiss: %+v %v", res, err)
	}
	d, page, err = e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || d.VisibleReplies() != 2 || len(page.Replies) != 2 || d.AcceptedReplyID != r.Reply.ID {
		t.Fatalf("after the dismiss: %+v %d %v", d, len(page.Replies), err)
	}
	if q, n, _ := m.Queue(ctx, nil); n != 0 || len(q) != 0 {
		t.Fatalf("queue after the dismiss: %+v", q)
	}
	if res, err := m.Dismiss(ctx, operator, moderation.Target{ID: r.Reply.ID}, ""); err != nil || res.Changed {
		t.Fatalf("a second dismiss: %+v %v", res, err)
	}
	// The three have flagged it once, ever.
	if res, err := m.Flag(ctx, moderation.Agent{ID: log[1].Actor.ID}, replyTarget(r.Reply), "spam", ""); err != nil || !res.AlreadyFlagged {
		t.Fatalf("a flag again after the dismiss: %+v %v", res, err)
	}
}

func ptr(n int) *int { return &n }
