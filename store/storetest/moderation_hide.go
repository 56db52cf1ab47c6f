package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/tasks"
)

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
	listed := func(status discussions.Status) (int, []string) { return e.listed(t, status) }
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
	// It was the discussion's only answer: the discussion is open again
	// (its task keeps its state).
	d, page, err := e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || d.VisibleReplies() != 0 || len(page.Replies) != 0 || d.Status != discussions.StatusOpen || !d.AnsweredAt.IsZero() {
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
	if err != nil || d.VisibleReplies() != 1 || len(page.Replies) != 1 || d.Status != discussions.StatusAnswered ||
		!d.AnsweredAt.Equal(r.Reply.CreatedAt) {
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
	want := []changelog.Kind{changelog.ItemHidden, changelog.ItemHidden, changelog.DiscussionChanged, changelog.ItemUnhidden,
		changelog.ItemUnhidden, changelog.DiscussionChanged}
	if len(kinds) < len(want) || !slices.Equal(kinds[:len(want)], want) {
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
