package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// signals is a trust service over e's store, on e's clock; the store
// reads records too (both stores do).
func (e *env) signals(lim trust.Limits) *trust.Service {
	rr, _ := e.store.(trust.RecordReader)
	return trust.NewService(e.store, rr, lim, e.clock.Now)
}

func as(a agents.Agent) trust.Agent { return trust.Agent{ID: a.ID, Name: a.Name} }

func replyOf(r discussions.ReplyResult) trust.Item {
	return trust.ReplyItem(r.Reply.DiscussionID, r.Reply.ID)
}

// board reads items' signals and agents' reputations, with voter's votes.
func (e *env) board(t *testing.T, voter string, items []trust.Item, agents ...string) trust.Board {
	t.Helper()
	b, err := e.signals(trust.Limits{}).Board(context.Background(),
		trust.BoardQuery{Items: items, Failures: trust.Failures, Agents: agents, Voter: voter})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rep is agent's reputation as the store keeps it.
func (e *env) rep(t *testing.T, agent string) trust.Reputation {
	t.Helper()
	return e.board(t, "", nil, agent).Reputations[agent]
}

// inboxOf is agent's whole inbox.
func (e *env) inboxOf(t *testing.T, agent string) []discussions.InboxEntry {
	t.Helper()
	p, err := e.ds.Inbox(context.Background(), agent, false, ptr(discussions.MaxPageSize), "")
	if err != nil {
		t.Fatal(err)
	}
	return p.Entries
}

// testVoteOnce: a vote is one standing vote per agent and item: voted
// again it changes nothing, replaced it moves the score and the author's
// reputation both ways, withdrawn it is gone; the author hears of votes
// once a day, and every change is one event.
func testVoteOnce(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	_, r := e.answered(t, alice, bob, "v1")
	item := replyOf(r)
	ts := e.signals(trust.Limits{Rate: ratelimit.PerMinute(10)})
	head := e.logHead(t)
	step := func(who agents.Agent, value, wantScore int, wantRep int64, changed bool) {
		t.Helper()
		e.clock.Advance(time.Second)
		res, err := ts.Vote(ctx, as(who), item, value)
		if err != nil {
			t.Fatalf("%s votes %d: %v", who.Name, value, err)
		}
		if res.Changed != changed || res.Tally.Score() != wantScore || res.Value != value {
			t.Fatalf("%s votes %d: %+v, want score %d changed %v", who.Name, value, res, wantScore, changed)
		}
		b := e.board(t, who.ID, []trust.Item{item}, bob.ID)
		if got := b.Of(item).Tally.Score(); got != wantScore || b.Mine[item] != value || b.Reputation(bob.ID) != wantRep {
			t.Fatalf("after %s votes %d: score %d, mine %d, bob's reputation %d; want %d, %d, %d", who.Name, value, got,
				b.Mine[item], b.Reputation(bob.ID), wantScore, value, wantRep)
		}
	}
	step(carol, 1, 1, trust.UpPoints, true)
	step(carol, 1, 1, trust.UpPoints, false)
	step(alice, 1, 2, 2*trust.UpPoints, true)
	step(carol, -1, 0, trust.UpPoints+trust.DownPoints, true)
	step(carol, 0, 1, trust.UpPoints, true)
	step(carol, 0, 1, trust.UpPoints, false)
	voted := 0
	for _, ev := range e.eventsSince(t, head) {
		if ev.Kind == changelog.ItemVoted {
			voted++
			if ev.ID != item.ID || ev.Ref != item.DiscussionID || ev.Note != bob.ID {
				t.Fatalf("event %+v", ev)
			}
		}
	}
	if voted != 4 {
		t.Fatalf("%d item.voted events, want one per change (4)", voted)
	}
	notices := func() int {
		n := 0
		for _, en := range e.inboxOf(t, bob.ID) {
			if en.KindOf() == discussions.InboxVoted {
				n++
				if en.ReplyID != item.ID || en.DiscussionID != item.DiscussionID || en.TaskIDs == nil {
					t.Fatalf("notice %+v", en)
				}
			}
		}
		return n
	}
	if n := notices(); n != 1 {
		t.Fatalf("%d voted notices after a day's votes, want 1", n)
	}
	e.clock.Advance(24 * time.Hour)
	step(carol, 1, 2, 2*trust.UpPoints, true)
	if n := notices(); n != 2 {
		t.Fatalf("%d voted notices after the next day's vote, want 2", n)
	}
}

// refusalCase is one signal a store must refuse, writing nothing.
type refusalCase struct {
	name string
	who  agents.Agent
	item trust.Item
	want error
}

// signalRefusals are the items nobody may vote on or verify, for who.
func (e *env) signalRefusals(t *testing.T) []refusalCase {
	t.Helper()
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	_, r := e.answered(t, alice, bob, "x1")
	_, hidden := e.answered(t, alice, bob, "x2")
	_, inHidden := e.answered(t, alice, bob, "x3")
	m := e.mod(moderation.Policy{})
	if _, err := m.Hide(context.Background(), operator, replyTarget(hidden.Reply), "spam"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Hide(context.Background(), operator, moderation.Target{Kind: moderation.KindDiscussion,
		ID: inHidden.Reply.DiscussionID}, "spam"); err != nil {
		t.Fatal(err)
	}
	return []refusalCase{
		{"one's own reply", bob, replyOf(r), trust.ErrOwnContent},
		{"a hidden reply", carol, replyOf(hidden), discussions.ErrReplyNotFound},
		{"a reply on a hidden discussion", carol, replyOf(inHidden), discussions.ErrNotFound},
		{"an unknown reply", carol, trust.ReplyItem(r.Reply.DiscussionID, "01JD0000000000000000000000"), discussions.ErrReplyNotFound},
		{"a reply named on another discussion", carol, trust.ReplyItem(hidden.Reply.DiscussionID, r.Reply.ID), discussions.ErrReplyNotFound},
		{"a malformed reply id", carol, trust.ReplyItem(r.Reply.DiscussionID, "not-a-reply"), discussions.ErrReplyNotFound},
		{"an unknown discussion", carol, trust.ReplyItem("01JD0000000000000000000000", r.Reply.ID), discussions.ErrNotFound},
		{"an unknown record", carol, trust.RecordItem("no-such-record"), knowledge.ErrNotFound},
	}
}

// testSignalRefusals: a vote or a verification on one's own reply, on a
// hidden or unknown one, or past the rate is refused, and writes
// nothing: no event, no signal, no reputation, no notice, no window.
func testSignalRefusals(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	cases := e.signalRefusals(t)
	ts := e.signals(trust.Limits{Rate: ratelimit.PerMinute(1)})
	items := make([]trust.Item, len(cases))
	var who []string
	for i, c := range cases {
		items[i] = c.item
		who = append(who, c.who.ID)
	}
	snapshot := func() (changelog.Position, trust.Board) {
		return e.logHead(t), e.board(t, cases[1].who.ID, items, who...)
	}
	head, before := snapshot()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ts.Vote(ctx, as(c.who), c.item, 1)
			errIs(t, err, c.want, "vote")
			_, err = ts.Verify(ctx, as(c.who), c.item, "worked", "", "")
			errIs(t, err, c.want, "verify")
		})
	}
	after, afterBoard := snapshot()
	if after != head || !reflect.DeepEqual(afterBoard, withNow(before, afterBoard.Now)) {
		t.Fatalf("refusals wrote something: log %s -> %s, board %+v -> %+v", head, after, before, afterBoard)
	}
	if w, err := e.store.VoteWindow(ctx, cases[1].who.ID); err != nil || !w.IsZero() {
		t.Fatalf("a refusal spent the vote rate: window %s, %v", w, err)
	}
}

// withNow is b read at now, to compare two reads.
func withNow(b trust.Board, now time.Time) trust.Board {
	b.Now = now
	return b
}

// testSignalRate: votes and verifications share one window per agent:
// past it, either is refused with its wait, and a vote that changes
// nothing spends nothing.
func testSignalRate(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	ts := e.signals(trust.Limits{Rate: ratelimit.PerMinute(2)})
	var items []trust.Item
	for _, m := range []string{"r1", "r2", "r3"} {
		_, r := e.answered(t, alice, bob, m)
		items = append(items, replyOf(r))
	}
	if _, err := ts.Vote(ctx, as(carol), items[0], 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, as(carol), items[1], "worked", "linux", ""); err != nil {
		t.Fatal(err)
	}
	if res, err := ts.Vote(ctx, as(carol), items[0], 1); err != nil || res.Changed {
		t.Fatalf("the standing vote again: %+v %v", res, err)
	}
	head := e.logHead(t)
	_, err := ts.Vote(ctx, as(carol), items[2], 1)
	var ex *ratelimit.Exceeded
	if !errors.As(err, &ex) || !errors.Is(err, trust.ErrVoteRate) || ex.RetryAfter <= 0 {
		t.Fatalf("a third signal in a minute: %v", err)
	}
	if _, err := ts.Verify(ctx, as(carol), items[2], "failed", "", ""); !errors.Is(err, trust.ErrVoteRate) {
		t.Fatalf("a verification past the shared rate: %v", err)
	}
	if e.logHead(t) != head || e.board(t, "", items[2:]).Of(items[2]).Tally != (trust.Tally{Item: items[2]}) {
		t.Fatal("a refusal over the rate wrote something")
	}
	e.clock.Advance(time.Minute)
	if _, err := ts.Vote(ctx, as(carol), items[2], 1); err != nil {
		t.Fatalf("a vote a minute later: %v", err)
	}
}

// testVerifyOnce: one standing report per agent and item; a new one
// replaces it, the counts, the newest "worked" time, the failures shown
// and the author's reputation move with it; the same report within a day
// changes nothing.
func testVerifyOnce(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice, bob, carol, dan := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol"), e.agent(t, "dan")
	_, r := e.answered(t, alice, bob, "w1")
	item := replyOf(r)
	ts := e.signals(trust.Limits{})
	verify := func(who agents.Agent, outcome, env string, changed bool) trust.VerifyResult {
		t.Helper()
		e.clock.Advance(time.Minute)
		res, err := ts.Verify(ctx, as(who), item, outcome, env, "note "+env)
		if err != nil || res.Changed != changed {
			t.Fatalf("%s reports %s on %s: %+v %v, want changed %v", who.Name, outcome, env, res, err, changed)
		}
		return res
	}
	dansAt := verify(dan, "worked", "linux", true).Verification.At
	verify(carol, "worked", "macos", true)
	verify(carol, "worked", "macos", false)
	b := e.board(t, "", []trust.Item{item}, bob.ID)
	if tl := b.Of(item).Tally; tl.Worked != 2 || tl.Failed != 0 || tl.Trust(b.Now) <= 1.9 || b.Reputation(bob.ID) != 2*trust.WorkedPoints {
		t.Fatalf("two worked reports: %+v, trust %v, bob's reputation %d", tl, tl.Trust(b.Now), b.Reputation(bob.ID))
	}
	verify(carol, "failed", "windows", true)
	b = e.board(t, "", []trust.Item{item}, bob.ID)
	s := b.Of(item)
	if s.Tally.Worked != 1 || s.Tally.Failed != 1 || !s.Tally.LastWorkedAt.Equal(dansAt) || b.Reputation(bob.ID) != trust.WorkedPoints {
		t.Fatalf("worked replaced by failed: %+v, bob's reputation %d", s.Tally, b.Reputation(bob.ID))
	}
	if len(s.Failures) != 1 || s.Failures[0].Environment != "windows" || s.Failures[0].AgentID != carol.ID {
		t.Fatalf("failures shown: %+v", s.Failures)
	}
	e.clock.Advance(trust.RepeatWindow)
	renewed := verify(dan, "worked", "linux", true).Verification.At
	if tl := e.board(t, "", []trust.Item{item}).Of(item).Tally; !tl.LastWorkedAt.Equal(renewed) || tl.Worked != 1 {
		t.Fatalf("a renewed report: %+v", tl)
	}
}

// testRecordSignals: a record takes votes and reports like a reply, and
// moves no one's reputation (records have no author).
func testRecordSignals(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	ks, ok := e.store.(knowledge.Store)
	if !ok {
		t.Fatal("the store keeps no records")
	}
	if _, err := ks.UpsertRecords(ctx, []knowledge.Record{record("rec-1", "a record")}, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	carol := e.agent(t, "carol")
	ts := e.signals(trust.Limits{})
	item := trust.RecordItem("rec-1")
	if _, err := ts.Vote(ctx, as(carol), item, 1); err != nil {
		t.Fatal(err)
	}
	head := e.logHead(t)
	res, err := ts.Verify(ctx, as(carol), item, "worked", "", "")
	if err != nil || res.Tally.Worked != 1 || res.Tally.Up != 1 || res.Tally.AuthorID != "" {
		t.Fatalf("record's signals: %+v %v", res, err)
	}
	evs := e.eventsSince(t, head)
	if len(evs) != 1 || evs[0].Kind != changelog.ItemVerified || evs[0].ID != "rec-1" || evs[0].Ref != "" || evs[0].Note != "" {
		t.Fatalf("events %+v", evs)
	}
}
