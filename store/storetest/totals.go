package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/tasks"
)

// testConcurrentTotals: the public discussion totals (ListDiscussions'
// totalSize, of every status and of each) are exact after asks that open
// discussions, replies that answer them, and hides and unhides of
// discussions and of replies, all at once on both handles, some on the
// same discussions: each total is the number of discussions a walk of
// the listing finds, on either handle. Hidden discussions are neither
// listed nor counted (moderation.md).
func testConcurrentTotals(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	e := p.envs[0]
	ctx := context.Background()
	const n = 8 // discussions of each kind, and askers
	bob := e.agent(t, "bob")
	askers := make([]agents.Agent, n)
	for i := range askers {
		askers[i] = e.agent(t, fmt.Sprint("asker-", i))
	}
	discussion := func(i int, msgID string) string {
		p.clock.Advance(time.Millisecond)
		return e.ask(t, askers[i], msgID).DiscussionID
	}
	var toAnswer, toHide, toUnhide, answerAndHide, answeredToHide []string
	var repliesToHide, repliesToUnhide []moderation.Target
	for i := range n {
		toAnswer = append(toAnswer, discussion(i, fmt.Sprint("a", i)))
		toHide = append(toHide, discussion(i, fmt.Sprint("h", i)))
		answerAndHide = append(answerAndHide, discussion(i, fmt.Sprint("ah", i)))
		d := discussion(i, fmt.Sprint("u", i))
		if _, err := e.mod(moderation.Policy{}).Hide(ctx, operator, discussionTarget(d), "spam"); err != nil {
			t.Fatal(err)
		}
		toUnhide = append(toUnhide, d)
		d = discussion(i, fmt.Sprint("ad", i))
		e.reply(t, bob, d, "an answer")
		answeredToHide = append(answeredToHide, d)
		d = discussion(i, fmt.Sprint("r", i))
		repliesToHide = append(repliesToHide, replyTarget(e.reply(t, bob, d, "an answer").Reply))
		d = discussion(i, fmt.Sprint("ru", i))
		r := replyTarget(e.reply(t, bob, d, "an answer").Reply)
		if _, err := e.mod(moderation.Policy{}).Hide(ctx, operator, r, "spam"); err != nil {
			t.Fatal(err)
		}
		repliesToUnhide = append(repliesToUnhide, r)
	}

	calls := []func(e *env) error{}
	for i := range n {
		calls = append(calls,
			func(e *env) error {
				_, _, err := e.tk.Ask(ctx, askInput(askers[i], fmt.Sprint("new", i), "a new question"))
				return err
			},
			func(e *env) error { return replyBy(e, bob, toAnswer[i]) },
			func(e *env) error { return hideOrUnhide(e, true, discussionTarget(toHide[i])) },
			func(e *env) error { return hideOrUnhide(e, false, discussionTarget(toUnhide[i])) },
			func(e *env) error { return replyBy(e, bob, answerAndHide[i]) },
			func(e *env) error { return hideOrUnhide(e, true, discussionTarget(answerAndHide[i])) },
			func(e *env) error { return hideOrUnhide(e, true, discussionTarget(answeredToHide[i])) },
			func(e *env) error { return hideOrUnhide(e, true, repliesToHide[i]) },
			func(e *env) error { return hideOrUnhide(e, false, repliesToUnhide[i]) },
		)
	}
	errs := p.race(len(calls), func(i int, e *env) error { return calls[i](e) })
	for i, err := range errs {
		// A reply to a discussion hidden first is a reply to no discussion.
		if err != nil && !isErr(err, discussions.ErrNotFound) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	for h, e := range p.envs {
		for _, st := range []discussions.Status{"", discussions.StatusOpen, discussions.StatusAnswered} {
			listed, total := walkDiscussions(t, e, st)
			if total != listed {
				t.Errorf("handle %d, status %q: total %d, %d discussions listed", h, st, total, listed)
			}
		}
	}
	// The walk is right too: of the 8n discussions (seven kinds made
	// before, and the new asks), those hidden at the end are toHide,
	// answeredToHide and answerAndHide.
	if all, _ := walkDiscussions(t, p.envs[1], ""); all != 5*n {
		t.Errorf("%d discussions listed, want %d", all, 5*n)
	}
}

func discussionTarget(id string) moderation.Target {
	return moderation.Target{Kind: moderation.KindDiscussion, ID: id}
}

// replyBy replies to discussion id as a.
func replyBy(e *env, a agents.Agent, id string) error {
	_, err := e.ds.Reply(context.Background(), discussions.Author{ID: a.ID, Name: a.Name}, id, "an answer")
	return err
}

// hideOrUnhide hides or unhides t as the operator.
func hideOrUnhide(e *env, hide bool, t moderation.Target) error {
	m := e.mod(moderation.Policy{})
	var err error
	if hide {
		_, err = m.Hide(context.Background(), operator, t, "spam")
	} else {
		_, err = m.Unhide(context.Background(), operator, t, "mistake")
	}
	return err
}

// walkDiscussions walks every page of the discussions of status st and
// returns how many it found and the total the pages gave (the same on
// every page, or -1).
func walkDiscussions(t *testing.T, e *env, st discussions.Status) (listed, total int) {
	t.Helper()
	token, total := "", -1
	for range 1000 {
		res, err := e.ds.List(context.Background(), st, new(7), token)
		if err != nil {
			t.Fatal(err)
		}
		if total >= 0 && res.TotalSize != total {
			t.Fatalf("status %q: a total of %d, then %d", st, total, res.TotalSize)
		}
		total = res.TotalSize
		listed += len(res.Discussions)
		if token = res.NextPageToken; token == "" {
			return listed, total
		}
	}
	t.Fatalf("status %q: more than 1000 pages", st)
	return 0, 0
}
