package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	settle(t, e.store)
	st, err := e.store.LogState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Last
}

// eventsSince are the log's events after pos, once all are readable.
func (e *env) eventsSince(t *testing.T, pos changelog.Position) []changelog.Event {
	t.Helper()
	settle(t, e.store)
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

// testHideUnhide: a moderator hides a discussion (gone from lists,
// counts and reads; replies and joins refused) and a reply, and unhides
// both: everything is as it was.
func testHideUnhide(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	tk, r := e.answered(t, a, b, "m1")
	waiting := e.ask(t, c, "m2")
	m := e.mod(moderation.Policy{HideThreshold: 3})
	listed := func(status discussions.Status) (int, []string) {
		l, err := e.ds.List(ctx, status, ptr(10), "")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range l.Discussions {
			ids = append(ids, d.ID)
		}
		return l.TotalSize, ids
	}
	head := e.logHead(t)
	e.clock.Advance(time.Minute)
	res, err := m.Hide(ctx, operator, moderation.Target{Kind: moderation.KindDiscussion, ID: waiting.DiscussionID}, "spam wave")
	if err != nil || !res.Changed || !res.Hidden {
		t.Fatalf("hide: %+v %v", res, err)
	}
	if n, ids := listed(""); n != 1 || slices.Contains(ids, waiting.DiscussionID) {
		t.Fatalf("all discussions after the hide: %d %v", n, ids)
	}
	if n, ids := listed(discussions.StatusOpen); n != 0 || len(ids) != 0 {
		t.Fatalf("open discussions after the hide: %d %v", n, ids)
	}
	_, _, err = e.ds.Get(ctx, waiting.DiscussionID, nil, "")
	var nf *discussions.NotFoundError
	if !errors.As(err, &nf) || !nf.Hidden {
		t.Fatalf("a reader's get of the hidden discussion: %v", err)
	}
	if _, _, err := e.ds.Review(ctx, waiting.DiscussionID, nil, ""); err != nil {
		t.Fatalf("a moderator's get: %v", err)
	}
	_, err = e.ds.Reply(ctx, discussions.Author{ID: b.ID, Name: b.Name}, waiting.DiscussionID, "an answer")
	errIs(t, err, discussions.ErrNotFound, "a reply to the hidden discussion")
	in := askInput(b, "join", "")
	in.JoinDiscussionID = waiting.DiscussionID
	_, _, err = e.tk.Ask(ctx, in)
	errIs(t, err, discussions.ErrNotFound, "a join of the hidden discussion")
	mustState(t, e.task(t, waiting.ID), a2a.TaskStateWorking) // hiding changes no task
	if res, err := m.Hide(ctx, operator, moderation.Target{ID: waiting.DiscussionID}, "again"); err != nil || res.Changed {
		t.Fatalf("a second hide: %+v %v", res, err)
	}

	e.clock.Advance(time.Second)
	res, err = m.Hide(ctx, operator, moderation.Target{ID: r.Reply.ID}, "rude")
	if err != nil || !res.Changed || res.ItemKind != moderation.KindReply || res.DiscussionID != tk.DiscussionID {
		t.Fatalf("hide a reply named by id: %+v %v", res, err)
	}
	d, page, err := e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || d.VisibleReplies() != 0 || len(page.Replies) != 0 || d.Status != discussions.StatusAnswered {
		t.Fatalf("after hiding the reply: %+v %+v %v", d, page.Replies, err)
	}
	mustState(t, e.task(t, tk.ID), a2a.TaskStateCompleted)

	for _, id := range []string{waiting.DiscussionID, r.Reply.ID} {
		e.clock.Advance(time.Second)
		if res, err := m.Unhide(ctx, operator, moderation.Target{ID: id}, "reviewed"); err != nil || !res.Changed || res.Hidden {
			t.Fatalf("unhide %s: %+v %v", id, res, err)
		}
	}
	if n, ids := listed(""); n != 2 || !slices.Contains(ids, waiting.DiscussionID) {
		t.Fatalf("all discussions after the unhide: %d %v", n, ids)
	}
	if n, _ := listed(discussions.StatusOpen); n != 1 {
		t.Fatalf("open discussions after the unhide: %d", n)
	}
	d, page, err = e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || d.VisibleReplies() != 1 || len(page.Replies) != 1 {
		t.Fatalf("after unhiding the reply: %+v %v", d, err)
	}
	if _, err := e.ds.Reply(ctx, discussions.Author{ID: b.ID, Name: b.Name}, waiting.DiscussionID, "an answer"); err != nil {
		t.Fatalf("a reply after the unhide: %v", err)
	}
	// The log: the events of each visible change, and the audit entries.
	var kinds []changelog.Kind
	for _, ev := range e.eventsSince(t, head) {
		kinds = append(kinds, ev.Kind)
	}
	want := []changelog.Kind{changelog.ItemHidden, changelog.ItemHidden, changelog.ItemUnhidden, changelog.ItemUnhidden}
	if !slices.Equal(kinds[:4], want) {
		t.Fatalf("events: %v, want %v then the reply's", kinds, want)
	}
	log := e.auditLog(t, m)
	if len(log) != 4 {
		t.Fatalf("audit log: %+v", log)
	}
	for i, w := range []struct {
		a      moderation.Action
		id, rs string
	}{{moderation.ActionUnhide, r.Reply.ID, "reviewed"}, {moderation.ActionUnhide, waiting.DiscussionID, "reviewed"},
		{moderation.ActionHide, r.Reply.ID, "rude"}, {moderation.ActionHide, waiting.DiscussionID, "spam wave"}} {
		got := log[i]
		if got.Action != w.a || got.ItemID != w.id || got.Reason != w.rs || got.Actor != operator || !got.At.Equal(e.clock.Now().Add(-time.Duration(i)*time.Second)) {
			t.Fatalf("audit entry %d: %+v, want %s %s (%s)", i, got, w.a, w.id, w.rs)
		}
	}
	// Unknown items.
	for _, tc := range []moderation.Target{{ID: "01JD0000000000000000000000"}, {ID: "nope"},
		{Kind: moderation.KindReply, ID: tk.DiscussionID}} {
		_, err := m.Hide(ctx, operator, tc, "x")
		errIs(t, err, moderation.ErrItemNotFound, "hide "+tc.ID)
	}
}

// testAccept: only the asker accepts, the mark moves, and readers see it.
func testAccept(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	tk, r1 := e.answered(t, a, b, "m1")
	r2 := e.reply(t, c, tk.DiscussionID, "a better answer")
	own := e.reply(t, a, tk.DiscussionID, "details")
	other, rOther := e.answered(t, c, b, "m2")
	head := e.logHead(t)
	for _, tc := range []struct {
		name, who, disc, reply string
		want                   error
	}{
		{"someone else", b.ID, tk.DiscussionID, r1.Reply.ID, discussions.ErrNotAsker},
		{"a reply of another discussion", a.ID, tk.DiscussionID, rOther.Reply.ID, discussions.ErrReplyNotFound},
		{"an unknown reply", a.ID, tk.DiscussionID, "01JD0000000000000000000000", discussions.ErrReplyNotFound},
		{"the asker's own reply", a.ID, tk.DiscussionID, own.Reply.ID, discussions.ErrAcceptOwn},
		{"an unknown discussion", a.ID, "01JD0000000000000000000000", r1.Reply.ID, discussions.ErrNotFound},
	} {
		_, err := e.ds.Accept(ctx, tc.who, tc.disc, tc.reply)
		errIs(t, err, tc.want, tc.name)
	}
	if evs := e.eventsSince(t, head); len(evs) != 0 {
		t.Fatalf("refused accepts wrote events: %+v", evs)
	}
	res, err := e.ds.Accept(ctx, a.ID, tk.DiscussionID, r1.Reply.ID)
	if err != nil || !res.Changed || res.Discussion.AcceptedReplyID != r1.Reply.ID {
		t.Fatalf("accept: %+v %v", res, err)
	}
	if res, err := e.ds.Accept(ctx, a.ID, tk.DiscussionID, r1.Reply.ID); err != nil || res.Changed {
		t.Fatalf("accept again: %+v %v", res, err)
	}
	if res, err := e.ds.Accept(ctx, a.ID, tk.DiscussionID, r2.Reply.ID); err != nil || !res.Changed {
		t.Fatalf("move the mark: %+v %v", res, err)
	}
	d, _, err := e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || d.AcceptedReplyID != r2.Reply.ID {
		t.Fatalf("after moving the mark: %+v %v", d, err)
	}
	evs := e.eventsSince(t, head)
	if len(evs) != 2 || evs[0].Kind != changelog.DiscussionChanged || evs[0].Ref != changelog.RefAccepted || evs[1].Note != r2.Reply.ID {
		t.Fatalf("events: %+v", evs)
	}
	// Hiding the accepted reply takes the mark; the asker cannot give it
	// back while it is hidden, and a hidden discussion takes no accept.
	m := e.mod(moderation.Policy{})
	if _, err := m.Hide(ctx, operator, moderation.Target{ID: r2.Reply.ID}, "wrong"); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := e.ds.Get(ctx, tk.DiscussionID, nil, ""); d.AcceptedReplyID != "" {
		t.Fatalf("a hidden reply kept the mark: %+v", d)
	}
	_, err = e.ds.Accept(ctx, a.ID, tk.DiscussionID, r2.Reply.ID)
	errIs(t, err, discussions.ErrReplyNotFound, "accept a hidden reply")
	if _, err := m.Hide(ctx, operator, moderation.Target{ID: other.DiscussionID}, "spam"); err != nil {
		t.Fatal(err)
	}
	_, err = e.ds.Accept(ctx, c.ID, other.DiscussionID, rOther.Reply.ID)
	errIs(t, err, discussions.ErrNotFound, "accept on a hidden discussion")
}

// testHideAuthor: everything an agent wrote, questions and replies, is
// hidden at once, each logged; running it again hides nothing more.
func testHideAuthor(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, spammer := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "spammer")
	q1 := e.ask(t, spammer, "s1")
	q2 := e.ask(t, spammer, "s2")
	tk, _ := e.answered(t, a, b, "m1")
	var spam []string
	for i := range 3 {
		spam = append(spam, e.reply(t, spammer, tk.DiscussionID, fmt.Sprint("buy now ", i)).Reply.ID)
	}
	m := e.mod(moderation.Policy{})
	ts, next, err := e.store.PostsBy(ctx, spammer.ID, "", 2)
	if err != nil || len(ts) != 2 || next == "" {
		t.Fatalf("posts, first page: %+v %q %v", ts, next, err)
	}
	res, err := m.HideAuthor(ctx, spammer.ID, operator, "agent revoked")
	if err != nil || res.Hidden != 5 || res.Already != 0 {
		t.Fatalf("hide author: %+v %v", res, err)
	}
	for _, id := range []string{q1.DiscussionID, q2.DiscussionID} {
		if _, _, err := e.ds.Get(ctx, id, nil, ""); !isErr(err, discussions.ErrNotFound) {
			t.Fatalf("the spammer's question %s: %v", id, err)
		}
	}
	d, page, err := e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || d.VisibleReplies() != 1 || len(page.Replies) != 1 || slices.Contains(spam, page.Replies[0].ID) {
		t.Fatalf("alice's discussion: %+v %+v %v", d, page.Replies, err)
	}
	if res, err := m.HideAuthor(ctx, spammer.ID, operator, "agent revoked"); err != nil || res.Hidden != 0 || res.Already != 5 {
		t.Fatalf("hide author again: %+v %v", res, err)
	}
	if log := e.auditLog(t, m); len(log) != 5 {
		t.Fatalf("audit log: %d entries, want 5", len(log))
	}
}

// testConcurrentFlags: twelve agents flag one reply at once, on both
// handles: every flag is stored, and the item is hidden exactly once.
func testConcurrentFlags(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	e := p.envs[0]
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	_, r := e.answered(t, a, b, "m1")
	const n = 12
	flaggers := make([]agents.Agent, n)
	for i := range n {
		flaggers[i] = e.agent(t, fmt.Sprint("flagger-", i))
	}
	head := e.logHead(t)
	hid := make([]bool, n)
	errs := p.race(n, func(i int, e *env) error {
		res, err := e.mod(moderation.Policy{HideThreshold: 3}).Flag(context.Background(), flagger(flaggers[i]), replyTarget(r.Reply), "spam", "")
		hid[i] = res.Hidden
		return err
	})
	// Once hidden, a flag is refused like one on no reply: the flags
	// after the third are either stored (before) or refused (after).
	stored := 0
	for i, err := range errs {
		switch {
		case err == nil:
			stored++
		case !isErr(err, discussions.ErrReplyNotFound):
			t.Fatalf("flag %d: %v", i, err)
		}
	}
	if stored != 3 {
		t.Fatalf("%d flags stored; the third hides the reply, and later ones are refused", stored)
	}
	hides := 0
	for _, h := range hid {
		if h {
			hides++
		}
	}
	hiddenEvents := 0
	for _, ev := range p.envs[1].eventsSince(t, head) {
		if ev.Kind == changelog.ItemHidden {
			hiddenEvents++
		}
	}
	if hides != 1 || hiddenEvents != 1 {
		t.Fatalf("hidden by %d flags, %d item.hidden events; want exactly one", hides, hiddenEvents)
	}
	d, err := p.envs[1].store.GetDiscussion(context.Background(), r.Reply.DiscussionID)
	if err != nil || d.HiddenReplies != 1 {
		t.Fatalf("discussion after: %+v %v", d, err)
	}
}

// testConcurrentFlagRate: one agent flags ten discussions at once, on
// both handles, under a flag rate of three a minute: exactly three flags
// are stored, and every other is refused by the rate, with its wait. The
// rate is the flagger's, so only a lock on the flagger decides it (each
// flag is on an item of its own).
func testConcurrentFlagRate(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	e := p.envs[0]
	a, carol := e.agent(t, "alice"), e.agent(t, "carol")
	const n = 10
	discs := make([]string, n)
	for i := range n {
		discs[i] = e.ask(t, a, fmt.Sprint("m", i)).DiscussionID
	}
	policy := moderation.Policy{HideThreshold: 3, Rate: ratelimit.PerMinute(3)}
	errs := p.race(n, func(i int, e *env) error {
		_, err := e.mod(policy).Flag(context.Background(), flagger(carol),
			moderation.Target{Kind: moderation.KindDiscussion, ID: discs[i]}, "spam", "")
		return err
	})
	tally(t, "flags by one agent under a rate of 3 a minute", errs, 3, moderation.ErrFlagRate)
	waitOf(t, errs)
	q, total, err := p.envs[1].mod(policy).Queue(context.Background(), nil)
	if err != nil || total != 3 || len(q) != 3 {
		t.Fatalf("the queue after: %d items, total %d (%v); want the 3 flagged discussions", len(q), total, err)
	}
}

// ptr is a page size, as a client names one.
func ptr(n int) *int { return &n }
