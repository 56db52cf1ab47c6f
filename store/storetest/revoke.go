package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// testRevokedAgentCommitsNothing: a request is authenticated before its
// command runs, so a revoke can commit in between. Every command an agent
// makes (ask, join, reply, cancel, flag, accept, ack, push config put
// and delete, a web session, a vote, a verification, a moderator's
// reputation reset) loads the agent under its lock and is
// refused agents.ErrRevoked when it was revoked, writing nothing: the
// store is driven here as a request that authenticated just before the
// revoke would drive it.
func testRevokedAgentCommitsNothing(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	m := e.mod(moderation.Policy{HideThreshold: 3})
	xavier, yuki, zoe := e.agent(t, "xavier"), e.agent(t, "yuki"), e.agent(t, "zoe")

	mine := e.ask(t, xavier, "x1") // stays WORKING: to cancel, and for configs
	cfg := push.Config{ID: "c1", TaskID: mine.ID, OwnerID: xavier.ID, URL: "https://hooks.example.com/x", CreatedAt: e.clock.Now()}
	if _, _, err := e.store.PutPushConfig(ctx, cfg, push.MaxConfigsPerTask); err != nil {
		t.Fatal(err)
	}
	answered, yukis := e.answered(t, xavier, yuki, "x2") // yuki's reply: to accept; xavier's inbox: to ack
	_, zoes := e.answered(t, yuki, zoe, "y1")            // zoe's reply: to flag
	open1 := e.ask(t, yuki, "y2")                        // open: to join, and to reply on
	inbox, err := e.ds.Inbox(ctx, xavier.ID, true, nil, "")
	if err != nil || len(inbox.Entries) != 1 {
		t.Fatalf("xavier's inbox: %+v %v", inbox, err)
	}
	ts := e.signals(trust.Limits{})
	// zoe's reputation, for the reset to have something to take.
	if _, err := ts.Vote(ctx, as(yuki), replyOf(zoes), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.Revoke(ctx, xavier.ID); err != nil {
		t.Fatal(err)
	}
	head := e.logHead(t)
	e.clock.Advance(time.Second)

	author := discussions.Author{ID: xavier.ID, Name: xavier.Name}
	join := askInput(xavier, "x4", "")
	join.JoinDiscussionID = open1.DiscussionID
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"ask", func() error {
			_, _, err := e.tk.Ask(ctx, askInput(xavier, "x3", "a question after the revoke"))
			return err
		}},
		{"ask again with a used message id", func() error { _, _, err := e.tk.Ask(ctx, askInput(xavier, "x1", "again")); return err }},
		{"join", func() error { _, _, err := e.tk.Ask(ctx, join); return err }},
		{"reply (it would complete yuki's task)", func() error { _, err := e.ds.Reply(ctx, author, open1.DiscussionID, "late"); return err }},
		{"cancel", func() error { _, _, err := e.tk.Cancel(ctx, xavier.ID, mine.ID); return err }},
		{"flag", func() error { _, err := m.Flag(ctx, flagger(xavier), replyTarget(zoes.Reply), "spam", ""); return err }},
		{"accept", func() error { _, err := e.ds.Accept(ctx, xavier.ID, answered.DiscussionID, yukis.Reply.ID); return err }},
		{"ack", func() error { _, err := e.ds.Ack(ctx, xavier.ID, []string{inbox.Entries[0].ID}); return err }},
		{"put a push config", func() error {
			c := cfg
			c.ID = "c2"
			_, _, err := e.store.PutPushConfig(ctx, c, push.MaxConfigsPerTask)
			return err
		}},
		{"delete a push config", func() error {
			_, err := e.store.DeletePushConfig(ctx, xavier.ID, mine.ID, cfg.ID, e.clock.Now())
			return err
		}},
		{"vote", func() error { _, err := ts.Vote(ctx, as(xavier), replyOf(zoes), 1); return err }},
		{"verify", func() error { _, err := ts.Verify(ctx, as(xavier), replyOf(zoes), "worked", "linux", ""); return err }},
		{"reset a reputation as a moderator", func() error {
			_, err := ts.Reset(ctx, trust.Reset{AgentID: zoe.ID, Reason: "farmed",
				Actor: moderation.Actor{Kind: moderation.ActorAgent, ID: xavier.ID, Name: xavier.Name}})
			return err
		}},
		{"start a web session", func() error {
			now := e.clock.Now()
			return e.store.CreateSession(ctx, sessions.Session{Digest: sessions.Digest{7}, AgentID: xavier.ID, CreatedAt: now,
				ExpiresAt: now.Add(time.Hour)})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, agents.ErrRevoked) {
				t.Fatalf("a revoked agent's %s: %v, want agents.ErrRevoked", c.name, err)
			}
		})
	}
	if evs := e.eventsSince(t, head); len(evs) != 0 {
		t.Fatalf("a revoked agent's refused commands wrote %d events, the first %s", len(evs), logLine(evs[0]))
	}
	// And nothing else of theirs: the task waits, the configs, the inbox
	// entry and the marks are as they were, no session was made.
	if got := e.task(t, mine.ID); got.State != mine.State {
		t.Fatalf("xavier's task is %s", got.State)
	}
	if got := e.task(t, open1.ID); got.State != open1.State {
		t.Fatalf("yuki's waiting task is %s", got.State)
	}
	if cs, err := e.store.PushConfigs(ctx, "", mine.ID); err != nil || len(cs) != 1 {
		t.Fatalf("xavier's configs: %+v %v", cs, err)
	}
	if again, err := e.ds.Inbox(ctx, xavier.ID, true, nil, ""); err != nil || len(again.Entries) != 1 {
		t.Fatalf("xavier's unacknowledged entries: %+v %v", again, err)
	}
	if d, _, err := e.ds.Get(ctx, answered.DiscussionID, nil, ""); err != nil || d.AcceptedReplyID != "" {
		t.Fatalf("the accepted reply: %q %v", d.AcceptedReplyID, err)
	}
	if _, err := e.store.GetSession(ctx, sessions.Digest{7}); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("a revoked agent's session: %v", err)
	}
}

// testConcurrentRevoke: an agent asks and replies from many callers on
// both handles while the operator revokes it. Every call either commits
// before the revoke commits or is refused agents.ErrRevoked: what the
// agent has (its tasks, its replies, the tasks its replies completed)
// when the revoke returns is what it has for good, however many of its
// calls were still in flight.
func testConcurrentRevoke(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	e := p.envs[0]
	ctx := context.Background()
	xavier, yuki := e.agent(t, "xavier"), e.agent(t, "yuki")
	// Yuki's open questions, each waiting: a reply of xavier's completes one.
	var discs []string
	for i := range 8 {
		discs = append(discs, e.ask(t, yuki, fmt.Sprint("y", i)).DiscussionID)
	}

	const callers = 8
	var (
		mu        sync.Mutex
		ok        int
		revokedAt = make(chan struct{}) // closed when the revoke returned
		after     [callers]int          // calls each caller began after it returned
		errs      []error
	)
	started := make(chan struct{}, callers*4)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pe := p.envs[c%2]
			for i := 0; ; i++ {
				select {
				case <-revokedAt:
					after[c]++
				default:
				}
				var err error
				if i%2 == 0 {
					_, _, err = pe.tk.Ask(ctx, askInput(xavier, fmt.Sprintf("x%d-%d", c, i), "a question"))
				} else {
					_, err = pe.ds.Reply(ctx, discussions.Author{ID: xavier.ID, Name: xavier.Name}, discs[(c+i)%len(discs)], "an answer")
				}
				select {
				case started <- struct{}{}:
				default:
				}
				switch {
				case err == nil:
					mu.Lock()
					ok++
					mu.Unlock()
				case errors.Is(err, agents.ErrRevoked):
					return
				default:
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				// Without the check, a caller would go on for ever: a few
				// calls after the revoke returned are proof enough.
				if after[c] >= 3 {
					return
				}
			}
		}()
	}
	for range callers * 2 { // the callers are under way
		<-started
	}
	if _, err := p.envs[1].ag.Revoke(ctx, xavier.ID); err != nil {
		t.Fatal(err)
	}
	asked, replied, completed := revokeTotals(t, e, xavier.ID, yuki.ID)
	close(revokedAt)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("calls failed otherwise than as revoked: %v", errs)
	}
	a2, r2, c2 := revokeTotals(t, e, xavier.ID, yuki.ID)
	if a2 != asked || r2 != replied || c2 != completed {
		t.Fatalf("after the revoke returned, xavier's calls still committed: tasks %d -> %d, replies %d -> %d, yuki's completed tasks %d -> %d",
			asked, a2, replied, r2, completed, c2)
	}
	if ok == 0 || ok != asked+replied {
		t.Fatalf("%d calls succeeded; xavier has %d tasks and %d replies", ok, asked, replied)
	}
	t.Logf("%d of xavier's calls committed before the revoke, and none after", ok)
}

// revokeTotals are xavier's tasks and replies, and yuki's completed tasks.
func revokeTotals(t *testing.T, e *env, xavier, yuki string) (asked, replied, completed int) {
	t.Helper()
	ctx := context.Background()
	page, err := e.store.ListTasks(ctx, tasks.ListQuery{OwnerID: xavier, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	done, err := e.store.ListTasks(ctx, tasks.ListQuery{OwnerID: yuki, State: a2a.TaskStateCompleted, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	after := ""
	for {
		posts, next, err := e.store.PostsBy(ctx, xavier, after, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range posts {
			if p.Kind == moderation.KindReply {
				replied++
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	return page.Total, replied, done.Total
}
