package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

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
