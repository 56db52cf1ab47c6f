package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

// testAskRateIsStored: the ask rate is kept by the store, so a new service
// over the same store (a restarted process, or another one) starts from
// the agent's window, not a fresh budget; refusals, retries and joins of
// answered discussions spend nothing.
func testAskRateIsStored(t *testing.T, open Opener) {
	limits := tasks.Limits{AskRate: ratelimit.PerMinute(2)}
	e := newEnv(t, open, limits)
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	first := e.ask(t, a, "m1")
	e.ask(t, a, "m2")
	// A retry is answered, and costs nothing.
	if _, created, err := e.tk.Ask(ctx, askInput(a, "m1", "again")); err != nil || created {
		t.Fatalf("retry at the limit: created=%v %v", created, err)
	}
	// The same store under a new service: still out of budget.
	restarted := tasks.NewService(e.store, limits, []byte(envSecret), e.clock.Now)
	_, _, err := restarted.Ask(ctx, askInput(a, "m3", "third"))
	var rl *tasks.RateLimitError
	if !errors.As(err, &rl) || !errors.Is(err, tasks.ErrAskRate) || rl.RetryAfter <= 0 || rl.RetryAfter > 30*time.Second {
		t.Fatalf("third ask within the minute after a restart: %v", err)
	}
	if l, _ := e.tk.List(ctx, a.ID, tasks.ListParams{}); l.TotalSize != 2 {
		t.Fatalf("the refused ask wrote a task: %d tasks", l.TotalSize)
	}
	// Other agents have their own window.
	e.ask(t, b, "b1")
	// A refused join spends nothing either: answer alice's first question,
	// then bob's join of it is refused, and bob still has his second ask.
	e.reply(t, b, first.DiscussionID, "answer")
	in := askInput(b, "b2", "")
	in.JoinDiscussionID = first.DiscussionID
	if _, _, err := restarted.Ask(ctx, in); !isErr(err, discussions.ErrAnswered) {
		t.Fatalf("join of an answered discussion: %v", err)
	}
	e.ask(t, b, "b3")
	// Time refills the window at the rate: one ask every 30 seconds.
	e.clock.Advance(rl.RetryAfter)
	if _, created, err := restarted.Ask(ctx, askInput(a, "m4", "later")); err != nil || !created {
		t.Fatalf("ask after the wait: %v", err)
	}
	if _, _, err := e.tk.Ask(ctx, askInput(a, "m5", "too soon")); !errors.As(err, &rl) || !errors.Is(err, tasks.ErrAskRate) {
		t.Fatalf("second ask right after the wait: %v", err)
	}
}

// testReplyLimits: the reply rate per agent and the bound on replies per
// discussion are kept by the store, refuse without writing, and hold for
// every service over it.
func testReplyLimits(t *testing.T, open Opener) {
	lim := discussions.Limits{ReplyRate: ratelimit.PerMinute(3), MaxReplies: 5}
	e := newEnvLimits(t, open, tasks.Limits{}, lim)
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	tk := e.ask(t, a, "m1")
	for i := range 3 {
		e.reply(t, b, tk.DiscussionID, fmt.Sprint("bob ", i))
	}
	author := discussions.Author{ID: b.ID, Name: b.Name}
	restarted := discussions.NewService(e.store, lim, []byte(envSecret), e.clock.Now)
	_, err := restarted.Reply(ctx, author, tk.DiscussionID, "a fourth within the minute")
	var ex *ratelimit.Exceeded
	if !errors.As(err, &ex) || !errors.Is(err, discussions.ErrReplyRate) || ex.RetryAfter <= 0 || ex.RetryAfter > 20*time.Second {
		t.Fatalf("fourth reply within the minute: %v", err)
	}
	d, _ := e.store.GetDiscussion(ctx, tk.DiscussionID)
	if d.ReplyCount != 3 {
		t.Fatalf("the refused reply was stored: %d replies", d.ReplyCount)
	}
	// Carol has her own budget, and the discussion takes two more replies.
	e.reply(t, c, tk.DiscussionID, "carol 1")
	e.reply(t, a, tk.DiscussionID, "alice 1")
	_, err = e.ds.Reply(ctx, discussions.Author{ID: c.ID, Name: c.Name}, tk.DiscussionID, "one too many")
	if !isErr(err, discussions.ErrTooManyReplies) {
		t.Fatalf("sixth reply on a discussion bounded at 5: %v", err)
	}
	// The bound is per discussion: another one still takes carol's reply.
	other := e.ask(t, a, "m2")
	e.reply(t, c, other.DiscussionID, "elsewhere")
	// A refused reply spent no budget: bob, once his window refills by one,
	// replies once on the other discussion and is refused after.
	e.clock.Advance(ex.RetryAfter)
	e.reply(t, b, other.DiscussionID, "bob later")
	if _, err := e.ds.Reply(ctx, author, other.DiscussionID, "bob again"); !errors.As(err, &ex) || !errors.Is(err, discussions.ErrReplyRate) {
		t.Fatalf("bob right after: %v", err)
	}
}

// testRepliesPaginated: a discussion's replies are read a page at a time,
// oldest first, with tokens bound to the discussion.
func testRepliesPaginated(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk := e.ask(t, a, "m1")
	var want []string
	for i := range 7 {
		e.clock.Advance(time.Millisecond)
		want = append(want, e.reply(t, b, tk.DiscussionID, fmt.Sprint("reply ", i)).Reply.ID)
	}
	var got []string
	token := ""
	pages := 0
	for {
		_, p, err := e.ds.Get(ctx, tk.DiscussionID, new(3), token)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range p.Replies {
			got = append(got, r.ID)
		}
		if token = p.NextPageToken; token == "" {
			break
		}
	}
	if pages != 3 || !eqStrings(got, want) {
		t.Fatalf("%d pages: %v, want %v", pages, got, want)
	}
	// Defaults, bounds, and a token of another discussion.
	if _, p, err := e.ds.Get(ctx, tk.DiscussionID, nil, ""); err != nil || len(p.Replies) != 7 || p.NextPageToken != "" {
		t.Fatalf("default page: %d replies, next %q, %v", len(p.Replies), p.NextPageToken, err)
	}
	if _, _, err := e.ds.Get(ctx, tk.DiscussionID, new(discussions.MaxPageSize+1), ""); err == nil {
		t.Fatal("a page over the maximum was accepted")
	}
	_, first, _ := e.ds.Get(ctx, tk.DiscussionID, new(1), "")
	other := e.ask(t, a, "m2")
	if _, _, err := e.ds.Get(ctx, other.DiscussionID, new(1), first.NextPageToken); err == nil {
		t.Fatal("a page token of another discussion was accepted")
	}
	// The store itself: an empty page for a discussion without replies.
	p, err := e.store.ListReplies(ctx, discussions.ReplyQuery{DiscussionID: other.DiscussionID, PageSize: 5})
	if err != nil || len(p.Replies) != 0 || p.Next != "" {
		t.Fatalf("no replies: %+v %v", p, err)
	}
}

// testReplyAfterManyFinishedTasks: a discussion that many tasks joined and
// left (canceled) still has a reply complete exactly the waiting ones and
// tell every agent that has a task on it, naming all its tasks there.
func testReplyAfterManyFinishedTasks(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	tk := e.ask(t, a, "m1")
	var bobs []string
	for i := range 30 {
		j := e.join(t, b, fmt.Sprint("b", i), tk.DiscussionID)
		bobs = append(bobs, j.ID)
		if i != 17 {
			if _, _, err := e.tk.Cancel(ctx, b.ID, j.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := e.reply(t, c, tk.DiscussionID, "the answer")
	want := []string{tk.ID, bobs[17]}
	slices.Sort(want)
	got := append([]string(nil), r.CompletedTaskIDs...)
	slices.Sort(got)
	if !eqStrings(got, want) {
		t.Fatalf("completed %v, want %v", got, want)
	}
	for i, id := range bobs {
		st := e.task(t, id).State
		if (i == 17) != (st == a2a.TaskStateCompleted) {
			t.Fatalf("bob's task %d is %s", i, st)
		}
	}
	in, err := e.ds.Inbox(ctx, b.ID, false, new(10), "")
	if err != nil || len(in.Entries) != 1 {
		t.Fatalf("bob's inbox: %+v %v", in.Entries, err)
	}
	gotIDs := append([]string(nil), in.Entries[0].TaskIDs...)
	slices.Sort(gotIDs)
	slices.Sort(bobs)
	if !eqStrings(gotIDs, bobs) {
		t.Fatalf("bob's entry names %d tasks, want all %d of his on the discussion", len(gotIDs), len(bobs))
	}
	if r.Notified != 2 {
		t.Fatalf("notified %d agents, want alice and bob", r.Notified)
	}
}
