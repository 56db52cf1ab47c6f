package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

// PairOpener returns two handles on one fresh, empty store, as two
// processes sharing it hold them (PostgreSQL: two pools, two *DB, on one
// database); a store only one process opens returns the same handle
// twice. It registers its own cleanup with t.
type PairOpener func(t *testing.T) (Store, Store)

// RunConcurrent runs the cases where callers race on one decision: each
// limit a command decides under a lock must hold exactly, with callers on
// both handles at once, and every refusal must be the limit's.
func RunConcurrent(t *testing.T, pair PairOpener) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, pair PairOpener)
	}{
		{"ReplyRateAcrossDiscussions", testConcurrentReplyRate},
		{"AskRate", testConcurrentAskRate},
		{"OpenTaskCap", testConcurrentMaxOpen},
		{"RepliesPerDiscussion", testConcurrentMaxReplies},
		{"DuplicateAgentNames", testConcurrentAgentNames},
		{"ProvisionOneAgent", testConcurrentProvision},
		{"ReplaceOneIdentity", testConcurrentReplace},
		{"FlagsHideOnce", testConcurrentFlags},
		{"FlagRate", testConcurrentFlagRate},
		{"EngineLocks", testEngineLocks},
		{"Revoke", testConcurrentRevoke},
		{"Answers", testConcurrentAnswers},
		{"DiscussionTotals", testConcurrentTotals},
		{"Peers", testConcurrentPeers},
		{"SignalRate", testConcurrentSignalRate},
		{"SignalsAndHides", testConcurrentSignalsAndHides},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, pair) })
	}
}

// peers are services over both handles of one store, on one clock.
type peers struct {
	clock *Clock
	envs  [2]*env
}

func newPeers(t *testing.T, pair PairOpener, lim tasks.Limits, replyLim discussions.Limits) *peers {
	t.Helper()
	a, b := pair(t)
	p := &peers{clock: NewClock()}
	for i, s := range []Store{a, b} {
		p.envs[i] = &env{
			store: s, clock: p.clock,
			ag: agents.NewService(s, p.clock.Now),
			tk: tasks.NewService(s, lim, []byte(envSecret), p.clock.Now),
			ds: discussions.NewService(s, replyLim, []byte(envSecret), p.clock.Now),
		}
	}
	return p
}

// race runs n callers at once, caller i on handle i%2, and returns each
// one's error.
func (p *peers) race(n int, call func(i int, e *env) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = call(i, p.envs[i%2])
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// tally checks that exactly want calls succeeded and that every other one
// was refused for reason, and says which failed otherwise.
func tally(t *testing.T, what string, errs []error, want int, reason error) {
	t.Helper()
	ok := 0
	var wrong []string
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, reason):
			wrong = append(wrong, fmt.Sprintf("call %d: %v", i, err))
		}
	}
	if len(wrong) > 0 {
		t.Fatalf("%s: refused for another reason than %q:\n%s", what, reason, strings.Join(wrong, "\n"))
	}
	if ok != want {
		t.Fatalf("%s: %d of %d calls got through, want exactly %d", what, ok, len(errs), want)
	}
}

// waitOf checks that a limit's refusal says when to try again.
func waitOf(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		var ex *ratelimit.Exceeded
		if err != nil && (!errors.As(err, &ex) || ex.RetryAfter <= 0 || ex.Msg == "") {
			t.Fatalf("call %d: a limit's refusal without its words and wait: %v", i, err)
		}
	}
}

// testConcurrentReplyRate: ten first replies by one author, on ten
// discussions, at once, under a limit of one a minute: exactly one is
// stored. The rate is the author's, so only a lock on the author decides
// it (a lock on each discussion decides nothing here).
func testConcurrentReplyRate(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{ReplyRate: ratelimit.PerMinute(1)})
	e := p.envs[0]
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	const n = 10
	discs := make([]string, n)
	for i := range n {
		discs[i] = e.ask(t, a, fmt.Sprint("m", i)).DiscussionID
	}
	errs := p.race(n, func(i int, e *env) error {
		_, err := e.ds.Reply(context.Background(), discussions.Author{ID: b.ID, Name: b.Name}, discs[i], "an answer")
		return err
	})
	tally(t, "first replies by one author", errs, 1, discussions.ErrReplyRate)
	waitOf(t, errs)
	stored := 0
	for _, id := range discs {
		d, err := e.store.GetDiscussion(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		stored += d.ReplyCount
	}
	if stored != 1 {
		t.Fatalf("%d replies stored, want 1", stored)
	}
}

// testConcurrentAskRate: twenty asks by one agent at once under a limit
// of three a minute: exactly three tasks exist after.
func testConcurrentAskRate(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{AskRate: ratelimit.PerMinute(3)}, discussions.Limits{})
	a := p.envs[0].agent(t, "alice")
	errs := p.race(20, func(i int, e *env) error {
		_, created, err := e.tk.Ask(context.Background(), askInput(a, fmt.Sprint("c", i), "concurrent"))
		if err == nil && !created {
			err = errors.New("answered as a retry")
		}
		return err
	})
	tally(t, "asks under a rate of 3 a minute", errs, 3, tasks.ErrAskRate)
	waitOf(t, errs)
	l, err := p.envs[1].tk.List(context.Background(), a.ID, tasks.ListParams{})
	if err != nil || l.TotalSize != 3 || len(l.Tasks) != 3 {
		t.Fatalf("tasks after: total %d, listed %d (%v); want 3", l.TotalSize, len(l.Tasks), err)
	}
}

// testConcurrentMaxOpen: twenty asks by one agent at once, with at most
// five open tasks: exactly five are created, and the others are refused
// by the bound, not by anything else.
func testConcurrentMaxOpen(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{MaxOpen: 5}, discussions.Limits{})
	a := p.envs[0].agent(t, "alice")
	errs := p.race(20, func(i int, e *env) error {
		_, created, err := e.tk.Ask(context.Background(), askInput(a, fmt.Sprint("c", i), "concurrent"))
		if err == nil && !created {
			err = errors.New("answered as a retry")
		}
		return err
	})
	tally(t, "asks with at most 5 open", errs, 5, tasks.ErrTooManyOpen)
	waitOf(t, errs)
	l, err := p.envs[1].tk.List(context.Background(), a.ID, tasks.ListParams{State: a2a.TaskStateWorking})
	if err != nil || l.TotalSize != 5 || len(l.Tasks) != 5 {
		t.Fatalf("open tasks after: total %d, listed %d (%v); want 5", l.TotalSize, len(l.Tasks), err)
	}
	u, err := p.envs[1].tk.Usage(context.Background(), a.ID)
	if err != nil || u.Open != 5 {
		t.Fatalf("usage after: %+v %v", u, err)
	}
}

// testConcurrentMaxReplies: twelve agents reply to one discussion at
// once, which takes three replies: exactly three are stored.
func testConcurrentMaxReplies(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{MaxReplies: 3})
	e := p.envs[0]
	const n = 12
	repliers := make([]agents.Agent, n)
	for i := range n {
		repliers[i] = e.agent(t, fmt.Sprint("replier-", i))
	}
	disc := e.ask(t, e.agent(t, "alice"), "m1").DiscussionID
	errs := p.race(n, func(i int, e *env) error {
		_, err := e.ds.Reply(context.Background(), discussions.Author{ID: repliers[i].ID, Name: repliers[i].Name}, disc, "an answer")
		return err
	})
	tally(t, "replies on a discussion that takes 3", errs, 3, discussions.ErrTooManyReplies)
	d, replies, err := p.envs[1].ds.Get(context.Background(), disc, nil, "")
	if err != nil || d.ReplyCount != 3 || len(replies.Replies) != 3 {
		t.Fatalf("discussion after: %d replies counted, %d stored (%v); want 3", d.ReplyCount, len(replies.Replies), err)
	}
}

// testConcurrentAgentNames: ten creates of one name (in different cases)
// at once: exactly one agent gets it, the others are refused as
// duplicates; allowed, a duplicate is created.
func testConcurrentAgentNames(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	ctx := context.Background()
	names := []string{"alice", "Alice", "ALICE", " alice", "aLiCe"}
	errs := p.race(10, func(i int, e *env) error {
		_, err := e.ag.Create(ctx, names[i%len(names)], []agents.Scope{agents.ScopeRead})
		return err
	})
	tally(t, "agents named alice", errs, 1, agents.ErrDuplicateName)
	for i, err := range errs {
		var dup *agents.DuplicateNameError
		if err != nil && (!errors.As(err, &dup) || dup.ID == "") {
			t.Fatalf("call %d: a duplicate's refusal names no agent: %v", i, err)
		}
	}
	if _, err := p.envs[1].ag.CreateAgent(ctx, agents.NewAgent{Name: "alice", Scopes: []agents.Scope{agents.ScopeRead},
		AllowDuplicateName: true}); err != nil {
		t.Fatalf("an allowed duplicate: %v", err)
	}
	if _, err := p.envs[0].ag.Create(ctx, "bob", []agents.Scope{agents.ScopeRead}); err != nil {
		t.Fatalf("another name: %v", err)
	}
	shared, err := p.envs[0].ag.SharedNames(ctx, []string{"ALICE", "bob", "carol"})
	if err != nil || !shared["ALICE"] || shared["bob"] || shared["carol"] {
		t.Fatalf("shared names: %v %v", shared, err)
	}
	page, err := p.envs[1].ag.List(ctx, nil, "")
	if err != nil || page.Total != 3 {
		t.Fatalf("agents: %d (%v), want 3", page.Total, err)
	}
}
