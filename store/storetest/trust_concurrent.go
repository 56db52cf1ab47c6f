package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// testConcurrentSignalRate: one agent votes on and verifies ten answers
// at once, on both handles, under a rate of three a minute: exactly three
// signals are stored, whichever their kind (one window), and every other
// is refused by the rate, with its wait.
func testConcurrentSignalRate(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	e := p.envs[0]
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	const n = 10
	items := make([]trust.Item, n)
	for i := range n {
		_, r := e.answered(t, alice, bob, fmt.Sprint("s", i))
		items[i] = replyOf(r)
	}
	lim := trust.Limits{Rate: ratelimit.PerMinute(3)}
	errs := p.race(n, func(i int, e *env) error {
		ts := e.signals(lim)
		if i%2 == 0 {
			_, err := ts.Vote(context.Background(), as(carol), items[i], 1)
			return err
		}
		_, err := ts.Verify(context.Background(), as(carol), items[i], "worked", "", "")
		return err
	})
	tally(t, "signals", errs, 3, trust.ErrVoteRate)
	waitOf(t, errs)
	stored := 0
	b := p.envs[1].board(t, "", items, bob.ID)
	for _, it := range items {
		tl := b.Of(it).Tally
		stored += tl.Up + tl.Worked
	}
	if stored != 3 {
		t.Fatalf("%d signals in the tallies, want 3", stored)
	}
}

// testConcurrentSignalsAndHides: voters vote and report on one author's
// answers on both handles while a moderator hides and shows them (and
// one question) and the asker moves the accepted mark: afterwards every
// tally holds exactly the standing signals, and the author's reputation
// is the formula over what stands (what is hidden counting against, not
// its signals).
func testConcurrentSignalsAndHides(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	e := p.envs[0]
	ctx := context.Background()
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	var replies []discussions.Reply
	var discs []string
	for _, m := range []string{"h1", "h2"} {
		tk, r := e.answered(t, alice, bob, m)
		r2 := e.reply(t, bob, tk.DiscussionID, "another answer")
		replies = append(replies, r.Reply, r2.Reply)
		discs = append(discs, tk.DiscussionID)
	}
	const voters = 8
	vs := make([]agents.Agent, voters)
	for i := range vs {
		vs[i] = e.agent(t, fmt.Sprint("voter-", i))
	}
	errs := p.race(voters+1, func(i int, e *env) error {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		if i == voters {
			return e.moderateAndAccept(ctx, rng, alice, replies, discs)
		}
		ts := e.signals(trust.Limits{})
		for range 12 {
			it := replyOf(discussions.ReplyResult{Reply: replies[rng.IntN(len(replies))]})
			var err error
			if rng.IntN(2) == 0 {
				_, err = ts.Vote(ctx, as(vs[i]), it, rng.IntN(3)-1)
			} else {
				_, err = ts.Verify(ctx, as(vs[i]), it, []string{"worked", "failed"}[rng.IntN(2)], "", "")
			}
			if err != nil && !isErr(err, discussions.ErrReplyNotFound) && !isErr(err, discussions.ErrNotFound) {
				return fmt.Errorf("voter %d: %w", i, err)
			}
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	p.envs[1].checkReputation(t, bob.ID, replies, discs)
}

// moderateAndAccept hides and shows the replies and the first question,
// and moves the accepted mark, for testConcurrentSignalsAndHides.
func (e *env) moderateAndAccept(ctx context.Context, rng *rand.Rand, asker agents.Agent, replies []discussions.Reply,
	discs []string) error {
	m := e.mod(moderation.Policy{})
	for range 20 {
		r := replies[rng.IntN(len(replies))]
		var err error
		switch rng.IntN(5) {
		case 0:
			_, err = m.Hide(ctx, operator, replyTarget(r), "test")
		case 1:
			_, err = m.Unhide(ctx, operator, replyTarget(r), "test")
		case 2:
			_, err = m.Hide(ctx, operator, moderation.Target{Kind: moderation.KindDiscussion, ID: discs[0]}, "test")
		case 3:
			_, err = m.Unhide(ctx, operator, moderation.Target{Kind: moderation.KindDiscussion, ID: discs[0]}, "test")
		default:
			_, err = e.ds.Accept(ctx, asker.ID, r.DiscussionID, r.ID)
		}
		if err != nil && !isErr(err, discussions.ErrReplyNotFound) && !isErr(err, discussions.ErrNotFound) {
			return fmt.Errorf("moderator: %w", err)
		}
	}
	return nil
}

// checkReputation checks that every tally of replies holds its standing
// signals, and that author's reputation is the formula over what stands.
func (e *env) checkReputation(t *testing.T, author string, replies []discussions.Reply, discs []string) {
	t.Helper()
	ctx := context.Background()
	var want trust.Reputation
	move := func(c trust.Component, n int) {
		want.Apply(author, []trust.Move{{AgentID: author, Component: c, N: int64(n)}})
	}
	items := make([]trust.Item, len(replies))
	for i, r := range replies {
		items[i] = trust.ReplyItem(r.DiscussionID, r.ID)
	}
	b := e.board(t, "", items, author)
	for i, r := range replies {
		now, err := e.store.GetReply(ctx, r.DiscussionID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var votes []trust.Vote
		var reports []trust.Verification
		if err := e.store.View(ctx, "storetest", func(l storage.Loader) error {
			key := storage.K(string(trust.ItemReply), r.ID)
			storage.Many(l, commands.Votes.Keys(), key, 1000, storage.Read, &votes)
			storage.Many(l, commands.Verifications.Keys(), key, 1000, storage.Read, &reports)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var got trust.Tally
		for _, v := range votes {
			if v.Value > 0 {
				got.Up++
			} else {
				got.Down++
			}
		}
		for _, v := range reports {
			if v.Outcome == trust.Worked {
				got.Worked++
			} else {
				got.Failed++
			}
		}
		tl := b.Of(items[i]).Tally
		if tl.Up != got.Up || tl.Down != got.Down || tl.Worked != got.Worked || tl.Failed != got.Failed {
			t.Fatalf("reply %d: tally %+v, standing signals up %d down %d worked %d failed %d", i, tl, got.Up, got.Down,
				got.Worked, got.Failed)
		}
		if now.Hidden {
			move(trust.CompHidden, 1)
			continue
		}
		move(trust.CompUp, got.Up)
		move(trust.CompDown, got.Down)
		move(trust.CompWorked, got.Worked)
		move(trust.CompAnswers, 1)
	}
	for _, id := range discs {
		d, err := e.store.GetDiscussion(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range replies {
			if r.ID == d.AcceptedReplyID {
				move(trust.CompAccepted, 1)
			}
		}
	}
	if got := b.Reputations[author]; got != want {
		t.Fatalf("reputation %+v, the formula over what stands gives %+v", got, want)
	}
}
