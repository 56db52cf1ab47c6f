package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

// testUsage: what an agent has left is read from the same stored windows
// and counter the writes check, so it survives a new service over the
// store, and a refused write changes none of it.
func testUsage(t *testing.T, open Opener) {
	e := newEnvLimits(t, open, tasks.Limits{AskRate: ratelimit.PerMinute(3), MaxOpen: 10},
		discussions.Limits{ReplyRate: ratelimit.PerMinute(2)})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")

	u, err := e.tk.Usage(ctx, a.ID)
	if err != nil || u.Asks == nil || u.Asks.Remaining != 3 || u.Asks.Limit != 3 || u.Open != 0 || u.MaxOpen != 10 {
		t.Fatalf("fresh agent: %+v %v", u, err)
	}
	first := e.ask(t, a, "m1")
	e.ask(t, a, "m2")
	// A new service over the same store (a restart) reads the same.
	restarted := tasks.NewService(e.store, tasks.Limits{AskRate: ratelimit.PerMinute(3), MaxOpen: 10}, []byte(envSecret), e.clock.Now)
	u, err = restarted.Usage(ctx, a.ID)
	if err != nil || u.Asks.Remaining != 1 || u.Open != 2 || u.Asks.Reset != 40*time.Second {
		t.Fatalf("after two asks: %+v %v", u, err)
	}
	if _, _, err := e.tk.Cancel(ctx, a.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if u, _ = e.tk.Usage(ctx, a.ID); u.Open != 1 || u.Asks.Remaining != 1 {
		t.Fatalf("after a cancel: %+v", u)
	}
	// Time gives the asks back; bob's usage is his own.
	e.clock.Advance(time.Minute)
	if u, _ = e.tk.Usage(ctx, a.ID); u.Asks.Remaining != 3 || u.Asks.Reset != 0 {
		t.Fatalf("a minute later: %+v", *u.Asks)
	}
	if u, _ = e.tk.Usage(ctx, b.ID); u.Asks.Remaining != 3 || u.Open != 0 {
		t.Fatalf("bob: %+v", u)
	}

	// Replies.
	q, limited, err := e.ds.ReplyQuota(ctx, b.ID)
	if err != nil || !limited || q.Remaining != 2 {
		t.Fatalf("bob before replying: %+v %v %v", q, limited, err)
	}
	second := e.ask(t, a, "m3")
	e.reply(t, b, second.DiscussionID, "one")
	if q, _, _ = e.ds.ReplyQuota(ctx, b.ID); q.Remaining != 1 || q.Reset != 30*time.Second {
		t.Fatalf("bob after a reply: %+v", q)
	}
	if q, _, _ = e.ds.ReplyQuota(ctx, a.ID); q.Remaining != 2 {
		t.Fatalf("alice, who never replied: %+v", q)
	}

	// Without limits there is no quota, and the open count still reads.
	free := newEnv(t, open, tasks.Limits{})
	c := free.agent(t, "carol")
	free.ask(t, c, "c1")
	if u, err := free.tk.Usage(ctx, c.ID); err != nil || u.Asks != nil || u.Open != 1 || u.MaxOpen != 0 {
		t.Fatalf("no limits: %+v %v", u, err)
	}
	if _, limited, err := free.ds.ReplyQuota(ctx, c.ID); err != nil || limited {
		t.Fatalf("no reply rate: %v %v", limited, err)
	}
}
