package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/tasks"
)

// replyAt is the reply by author on discussion discID with its time (and
// its id's) set to at: what discussions.Service.Reply makes before the
// reply waits for the write.
func replyAt(author agents.Agent, discID string, at time.Time) discussions.Reply {
	return discussions.Reply{ID: ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()).String(), DiscussionID: discID,
		AuthorID: author.ID, AuthorName: author.Name, Body: "an answer from " + author.Name, CreatedAt: at}
}

// listed is how many discussions of status readers are shown in all,
// and the ids of the first 50.
func (e *env) listed(t *testing.T, status discussions.Status) (int, []string) {
	t.Helper()
	l, err := e.ds.List(context.Background(), status, ptr(50), "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range l.Discussions {
		ids = append(ids, d.ID)
	}
	return l.TotalSize, ids
}

// mustAnsweredAt fails unless discussion id is answered at at (open when
// at is zero).
func mustAnsweredAt(t *testing.T, s Store, id string, at time.Time) {
	t.Helper()
	d, err := s.GetDiscussion(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := discussions.StatusAnswered
	if at.IsZero() {
		want = discussions.StatusOpen
	}
	if d.Status != want || !d.AnsweredAt.Equal(at) {
		t.Fatalf("discussion %s is %s at %s, want %s at %s", id, d.Status, a2a.FormatTime(d.AnsweredAt), want, a2a.FormatTime(at))
	}
}

// testAnsweredAtTheEarliestReply: a reply's time is set before it waits
// for the write, so replies commit in any order; the discussion is
// answered at its earliest qualifying reply's time whatever order they
// committed in (here the latest first), and kfa check, run on what the
// test leaves, agrees.
func testAnsweredAtTheEarliestReply(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice := e.agent(t, "alice")
	helpers := []agents.Agent{e.agent(t, "bob"), e.agent(t, "carol"), e.agent(t, "dan"), e.agent(t, "erin")}
	base := e.clock.Now().Add(time.Second)
	for i := range 3 {
		tk := e.ask(t, alice, fmt.Sprint("m", i))
		// The asker's own details, earliest of all, answer nothing.
		if _, err := e.store.AddReply(ctx, replyAt(alice, tk.DiscussionID, base.Add(-time.Millisecond)), discussions.Limits{}); err != nil {
			t.Fatal(err)
		}
		for j := len(helpers) - 1; j >= 0; j-- {
			r := replyAt(helpers[j], tk.DiscussionID, base.Add(time.Duration(j)*time.Millisecond))
			if _, err := e.store.AddReply(ctx, r, discussions.Limits{}); err != nil {
				t.Fatal(err)
			}
		}
		mustAnsweredAt(t, e.store, tk.DiscussionID, base)
		mustState(t, e.task(t, tk.ID), a2a.TaskStateCompleted)
	}
}

// testOnlyAnswerHidden: when flags (or a revoke's --hide-content) hide
// the only answer of a question, the question is open again: listed and
// counted as open, joined by a new agent; the tasks keep their states.
// Unhidden, the answer answers it again, at its own time, and a task
// that joined meanwhile keeps waiting for the next answer (hiding and
// unhiding never change a task), which kfa check, run on what the test
// leaves, takes for no fault.
func testOnlyAnswerHidden(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice, spammer, newcomer, bob := e.agent(t, "alice"), e.agent(t, "spammer"), e.agent(t, "newcomer"), e.agent(t, "bob")
	flaggers := []agents.Agent{e.agent(t, "f1"), e.agent(t, "f2"), e.agent(t, "f3")}
	m := e.mod(moderation.Policy{HideThreshold: 3})
	listed := func(status discussions.Status) (int, []string) { return e.listed(t, status) }

	asked, spam := e.answered(t, alice, spammer, "q1")
	disc := asked.DiscussionID
	mustAnsweredAt(t, e.store, disc, spam.Reply.CreatedAt)
	head := e.logHead(t)
	e.clock.Advance(time.Second)
	for _, f := range flaggers {
		if _, err := m.Flag(ctx, flagger(f), replyTarget(spam.Reply), "spam", ""); err != nil {
			t.Fatal(err)
		}
	}
	// Open again: read, listed and counted so; the event says so.
	mustAnsweredAt(t, e.store, disc, time.Time{})
	if n, ids := listed(discussions.StatusOpen); n != 1 || !slices.Equal(ids, []string{disc}) {
		t.Fatalf("open discussions after the hide: %d %v", n, ids)
	}
	if n, ids := listed(discussions.StatusAnswered); n != 0 || len(ids) != 0 {
		t.Fatalf("answered discussions after the hide: %d %v", n, ids)
	}
	var said bool
	for _, ev := range e.eventsSince(t, head) {
		said = said || ev.Kind == changelog.DiscussionChanged && ev.ID == disc && ev.Ref == changelog.RefStatus &&
			ev.Note == string(discussions.StatusOpen)
	}
	if !said {
		t.Fatal("no event says the discussion is open again")
	}
	// A newcomer joins it; the asker's task keeps its completion.
	in := askInput(newcomer, "n1", "")
	in.JoinDiscussionID = disc
	joined, _, err := e.tk.Ask(ctx, in)
	if err != nil {
		t.Fatalf("a join of a question whose only answer is hidden: %v", err)
	}
	mustState(t, joined, a2a.TaskStateWorking)
	mustState(t, e.task(t, asked.ID), a2a.TaskStateCompleted)

	// The flags were wrong: dismissed, the answer is public again and
	// answers the question at its own time; the joined task keeps waiting.
	e.clock.Advance(time.Second)
	if _, err := m.Dismiss(ctx, operator, replyTarget(spam.Reply), "not spam after all"); err != nil {
		t.Fatal(err)
	}
	mustAnsweredAt(t, e.store, disc, spam.Reply.CreatedAt)
	mustState(t, e.task(t, joined.ID), a2a.TaskStateWorking)

	// A second question, answered by the spammer, then by bob: revoking
	// the spammer with its content hidden leaves bob's as the answer, at
	// bob's time. A third, answered by the spammer alone, is open again.
	e.clock.Advance(time.Second)
	second, _ := e.answered(t, alice, spammer, "q2")
	e.clock.Advance(time.Second)
	byBob := e.reply(t, bob, second.DiscussionID, "the real answer")
	third, _ := e.answered(t, alice, spammer, "q3")
	if _, err := e.ag.Revoke(ctx, spammer.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.HideAuthor(ctx, spammer.ID, operator, "spam wave"); err != nil {
		t.Fatal(err)
	}
	mustAnsweredAt(t, e.store, second.DiscussionID, byBob.Reply.CreatedAt)
	mustAnsweredAt(t, e.store, third.DiscussionID, time.Time{})
	mustAnsweredAt(t, e.store, disc, time.Time{}) // the first question's answer was the spammer's too
	mustState(t, e.task(t, third.ID), a2a.TaskStateCompleted)
}

// testConcurrentAnswers: 40 questions, each given 8 qualifying replies
// at once from callers on both handles, each reply's time set before it
// waits for the write (so they commit in any order): every question is
// answered at its earliest reply's time, and kfa check, run on what the
// test leaves, finds nothing wrong.
func testConcurrentAnswers(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	e := p.envs[0]
	ctx := context.Background()
	alice := e.agent(t, "alice")
	var helpers []agents.Agent
	for i := range 8 {
		helpers = append(helpers, e.agent(t, fmt.Sprint("helper-", i)))
	}
	const questions = 40
	discs := make([]string, questions)
	for i := range discs {
		discs[i] = e.ask(t, alice, fmt.Sprint("q", i)).DiscussionID
	}
	base := p.clock.Now().Add(time.Second)
	type call struct {
		r discussions.Reply
		e *env
	}
	var calls []call
	for i, d := range discs {
		for j, h := range helpers {
			calls = append(calls, call{replyAt(h, d, base.Add(time.Duration(j)*time.Millisecond)), p.envs[(i+j)%2]})
		}
	}
	rand.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan call)
	for range 16 {
		wg.Go(func() {
			for c := range next {
				if _, err := c.e.store.AddReply(ctx, c.r, discussions.Limits{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, c := range calls {
		next <- c
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d replies failed, the first: %v", len(errs), errs[0])
	}
	for _, d := range discs {
		mustAnsweredAt(t, e.store, d, base)
	}
}

// testAnswerMovesByID: an operator's hide and unhide of a reply named by
// its id alone (kfa moderation hide ID), or as a reply without its
// discussion, answer the discussion by its earliest visible qualifying
// reply besides it, as a hide named with its discussion does: found
// through the reply, with the discussion's other replies (the asker's own
// earliest of all, which answers nothing).
func testAnswerMovesByID(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	m := e.mod(moderation.Policy{})
	for i, tc := range []struct {
		name   string
		target func(r discussions.Reply) moderation.Target
	}{
		{"by id alone", func(r discussions.Reply) moderation.Target { return moderation.Target{ID: r.ID} }},
		{"as a reply, by id", func(r discussions.Reply) moderation.Target {
			return moderation.Target{Kind: moderation.KindReply, ID: r.ID}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := e.ask(t, alice, fmt.Sprint("byid", i))
			e.clock.Advance(time.Second)
			e.reply(t, alice, tk.DiscussionID, "details")
			e.clock.Advance(time.Second)
			first := e.reply(t, bob, tk.DiscussionID, "first")
			e.clock.Advance(time.Second)
			second := e.reply(t, carol, tk.DiscussionID, "second")
			mustAnsweredAt(t, e.store, tk.DiscussionID, first.Reply.CreatedAt)
			if res, err := m.Hide(ctx, operator, tc.target(first.Reply), "wrong"); err != nil || !res.Changed {
				t.Fatalf("hide: %+v %v", res, err)
			}
			mustAnsweredAt(t, e.store, tk.DiscussionID, second.Reply.CreatedAt)
			if res, err := m.Hide(ctx, operator, tc.target(second.Reply), "wrong too"); err != nil || !res.Changed {
				t.Fatalf("hide: %+v %v", res, err)
			}
			mustAnsweredAt(t, e.store, tk.DiscussionID, time.Time{})
			if res, err := m.Unhide(ctx, operator, tc.target(first.Reply), "reviewed"); err != nil || !res.Changed {
				t.Fatalf("unhide: %+v %v", res, err)
			}
			mustAnsweredAt(t, e.store, tk.DiscussionID, first.Reply.CreatedAt)
		})
	}
}
