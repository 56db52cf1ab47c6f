package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// testReputation: an author's reputation follows what others do with its
// answers (votes, worked reports, accepts) and what moderators hide,
// both ways, and a reset brings it to 0 with an audit entry.
func testReputation(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice, bob, carol, dan := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol"), e.agent(t, "dan")
	tk, r1 := e.answered(t, alice, bob, "p1")
	r2 := e.reply(t, carol, tk.DiscussionID, "carol's answer")
	ts := e.signals(trust.Limits{})
	m := e.mod(moderation.Policy{})
	want := func(what string, pts map[*agents.Agent]int64) {
		t.Helper()
		for a, p := range pts {
			if got := e.rep(t, a.ID).Points; got != p {
				t.Fatalf("%s: %s's reputation %d, want %d", what, a.Name, got, p)
			}
		}
	}
	if _, err := ts.Vote(ctx, as(carol), replyOf(r1), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, as(dan), replyOf(r1), "worked", "", ""); err != nil {
		t.Fatal(err)
	}
	signals := int64(trust.UpPoints + trust.WorkedPoints)
	want("a vote and a worked report", map[*agents.Agent]int64{&bob: signals, &carol: 0})
	accept := func(r discussions.ReplyResult) {
		t.Helper()
		e.clock.Advance(time.Second)
		if _, err := e.ds.Accept(ctx, alice.ID, tk.DiscussionID, r.Reply.ID); err != nil {
			t.Fatal(err)
		}
	}
	accept(r1)
	want("accepted", map[*agents.Agent]int64{&bob: signals + trust.AcceptedPoints})
	accepted := 0
	for _, en := range e.inboxOf(t, bob.ID) {
		if en.KindOf() == discussions.InboxAccepted && en.ReplyID == r1.Reply.ID {
			accepted++
		}
	}
	if accepted != 1 {
		t.Fatalf("%d accepted notices in bob's inbox, want 1", accepted)
	}
	accept(r2)
	want("the mark moved", map[*agents.Agent]int64{&bob: signals, &carol: trust.AcceptedPoints})
	accept(r1)
	hide := func(target moderation.Target) {
		t.Helper()
		if _, err := m.Hide(ctx, operator, target, "test"); err != nil {
			t.Fatal(err)
		}
	}
	unhide := func(target moderation.Target) {
		t.Helper()
		if _, err := m.Unhide(ctx, operator, target, "test"); err != nil {
			t.Fatal(err)
		}
	}
	hide(replyTarget(r1.Reply))
	want("the accepted answer hidden", map[*agents.Agent]int64{&bob: trust.HiddenPoints, &carol: 0})
	if b := e.rep(t, bob.ID); b.Answers != 0 || b.Accepted != 0 {
		t.Fatalf("bob's counts with his answer hidden: %+v", b)
	}
	unhide(replyTarget(r1.Reply))
	want("shown again, with its mark", map[*agents.Agent]int64{&bob: signals + trust.AcceptedPoints})
	disc := moderation.Target{Kind: moderation.KindDiscussion, ID: tk.DiscussionID}
	hide(disc)
	want("the question hidden", map[*agents.Agent]int64{&alice: trust.HiddenPoints, &bob: signals + trust.AcceptedPoints})
	unhide(disc)
	want("the question shown", map[*agents.Agent]int64{&alice: 0})

	head := e.logHead(t)
	e.clock.Advance(time.Second) // the audit log lists the newest first
	took, err := ts.Reset(ctx, trust.Reset{AgentID: bob.ID, Actor: operator, Reason: "sock puppets"})
	if err != nil || took != signals+trust.AcceptedPoints {
		t.Fatalf("reset: %d %v", took, err)
	}
	want("reset", map[*agents.Agent]int64{&bob: 0})
	if b := e.rep(t, bob.ID); b.Answers != 1 || b.Accepted != 1 {
		t.Fatalf("a reset changed bob's counts: %+v", b)
	}
	evs := e.eventsSince(t, head)
	if len(evs) != 1 || evs[0].Kind != changelog.ReputationReset || evs[0].ID != bob.ID {
		t.Fatalf("reset's events %+v", evs)
	}
	if log := e.auditLog(t, m); len(log) == 0 || log[0].Action != moderation.ActionResetReputation || log[0].ItemID != bob.ID ||
		log[0].Reason != "sock puppets" {
		t.Fatalf("audit log %+v", log)
	}
	if took, err := ts.Reset(ctx, trust.Reset{AgentID: bob.ID, Actor: operator, Reason: "again"}); err != nil || took != 0 {
		t.Fatalf("a reset of 0: %d %v", took, err)
	}
	if e.logHead(t) != evs[0].Pos {
		t.Fatal("a reset of 0 wrote an event")
	}
	if _, err := ts.Reset(ctx, trust.Reset{AgentID: "01JD0000000000000000000000", Actor: operator, Reason: "x"}); !errors.Is(err, agents.ErrNotFound) {
		t.Fatalf("reset of no agent: %v", err)
	}
	if _, err := ts.Reset(ctx, trust.Reset{AgentID: bob.ID, Actor: operator}); err == nil {
		t.Fatal("a reset without a reason")
	}
}

// testProfile: a profile counts and lists what readers see of an agent's
// questions and answers, newest first.
func testProfile(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	ts := e.signals(trust.Limits{})
	var answers []discussions.ReplyResult
	for _, m := range []string{"q1", "q2", "q3"} {
		tk, r := e.answered(t, alice, bob, m)
		answers = append(answers, r)
		e.clock.Advance(time.Second)
		e.reply(t, alice, tk.DiscussionID, "details") // the asker's own: not an answer
	}
	p, err := ts.Profile(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "alice" || p.Questions != 3 || p.Answers != 0 || len(p.Recent) != 3 || p.Recent[0].Title != "question q3" ||
		p.Recent[0].Kind != trust.PostQuestion || !p.Joined.Equal(alice.CreatedAt) {
		t.Fatalf("alice's profile %+v", p)
	}
	if _, err := e.mod(moderation.Policy{}).Hide(ctx, operator, replyTarget(answers[2].Reply), "spam"); err != nil {
		t.Fatal(err)
	}
	p, err = ts.Profile(ctx, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Answers != 2 || p.Questions != 0 || len(p.Recent) != 2 || p.Recent[0].ID != answers[1].Reply.ID ||
		p.Recent[0].Kind != trust.PostAnswer || p.Recent[0].Title != "question q2" || p.Reputation != trust.HiddenPoints {
		t.Fatalf("bob's profile, one answer hidden: %+v", p)
	}
	if _, err := ts.Profile(ctx, "01JD0000000000000000000000"); !errors.Is(err, agents.ErrNotFound) {
		t.Fatalf("the profile of no agent: %v", err)
	}
	if _, err := ts.Profile(ctx, "not an id"); !errors.Is(err, agents.ErrNotFound) {
		t.Fatalf("the profile of a malformed id: %v", err)
	}
}
