package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	peerdom "github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/tasks"
)

// errNotLeased stands for a lease that did not go to the caller.
var errNotLeased = errors.New("not leased")

// testConcurrentPeers: on two handles of one store (two processes on
// PostgreSQL), at once: ten adds of one name make one peer; ten leases of
// a peer go to one holder, and only that holder's page is written; ten
// plans of one discussion's forwards make one forward a peer; ten
// arrivals of one answer make one reply, completing each waiting task
// once.
func testConcurrentPeers(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	ctx := context.Background()
	now := p.clock.Now()

	errs := p.race(10, func(i int, e *env) error {
		_, err := e.store.AddPeer(ctx, peerdom.AddInput{Name: "b", URL: srvB, Token: "t", Follow: true, ForwardAsks: true}, cardB, now)
		return err
	})
	tally(t, "adds of one name", errs, 1, peerdom.ErrExists)

	holders := make([]string, 10)
	errs = p.race(10, func(i int, e *env) error {
		holders[i] = fmt.Sprintf("h%d", i)
		if _, ok, err := e.store.LeasePeer(ctx, "b", holders[i], now); err != nil || !ok {
			return errors.Join(err, errNotLeased)
		}
		return nil
	})
	tally(t, "leases of one peer", errs, 1, errNotLeased)
	winner := ""
	for i, err := range errs {
		if err == nil {
			winner = holders[i]
		}
	}
	errs = p.race(10, func(i int, e *env) error {
		pg := peerdom.Page{Server: srvB, Next: "c1", Changes: []peerdom.Change{feedRecord(fmt.Sprintf("r%d", i), "t", now)}}
		_, err := e.store.ApplyPage(ctx, "b", holders[i], "", self, pg, now)
		return err
	})
	tally(t, "pages of one pass", errs, 1, peerdom.ErrLeaseLost)
	if errs[indexOf(holders, winner)] != nil {
		t.Fatalf("the lease's holder %s could not write its page: %v", winner, errs[indexOf(holders, winner)])
	}

	e0 := p.envs[0]
	alice, bob := e0.agent(t, "alice"), e0.agent(t, "bob")
	tk := e0.ask(t, alice, "race-1")
	joined := e0.join(t, bob, "race-2", tk.DiscussionID)
	var forwards [10][]peerdom.Forward
	errs = p.race(10, func(i int, e *env) error {
		var err error
		forwards[i], err = e.store.PlanForwards(ctx, tk.DiscussionID, now)
		return err
	})
	tally(t, "plans of one discussion's forwards", errs, 10, nil)
	made := 0
	for _, fs := range forwards {
		made += len(fs)
	}
	if made != 1 {
		t.Fatalf("%d forwards of one discussion to one peer", made)
	}
	if err := e0.store.ForwardSent(ctx, "b", tk.DiscussionID, peerdom.Asked{TaskID: "RT", At: now}, now); err != nil {
		t.Fatal(err)
	}

	remote := ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String()
	var added [10]bool
	errs = p.race(10, func(i int, e *env) error {
		out, err := e.store.AddAnswer(ctx, peerdom.Answer{Peer: "b", Server: srvB, DiscussionID: tk.DiscussionID, ReplyID: remote,
			AuthorName: "carol", Body: "answer"}, discussions.Limits{}, now)
		added[i] = out.Reply != nil
		return err
	})
	tally(t, "arrivals of one answer", errs, 10, nil)
	n := 0
	for _, a := range added {
		if a {
			n++
		}
	}
	d, err := e0.store.GetDiscussion(ctx, tk.DiscussionID)
	if n != 1 || err != nil || d.ReplyCount != 1 {
		t.Fatalf("one answer arriving ten times: %d stored it, the discussion holds %d replies (%v)", n, d.ReplyCount, err)
	}
	for _, id := range []string{tk.ID, joined.ID} {
		mustState(t, e0.task(t, id), a2a.TaskStateCompleted)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
