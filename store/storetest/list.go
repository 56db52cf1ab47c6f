package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// parallel runs fn(i) for i in [0, n) on a few workers, so group commit
// can share transactions between them.
func parallel(n int, fn func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				fn(i)
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// order is the ListTasks order: newest status timestamp first, ties by id
// descending.
func order(a, b tasks.Task) int {
	if c := b.StatusTime.Compare(a.StatusTime); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// testListTasksWalk builds 1,000 tasks across agents, contexts and states,
// then walks every page of every filter combination and compares with a
// model: each matching task exactly once, in order, with the right total.
func testListTasksWalk(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	owners := []agents.Agent{e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")}
	replier := e.agent(t, "dave")
	n := 1000
	if testing.Short() {
		n = 300
	}
	contexts := []string{"", "ctx-a", "ctx-b", "ctx-c"}
	created := make([]tasks.Task, n)
	var clockMu sync.Mutex
	parallel(n, func(i int) {
		owner := owners[i%len(owners)]
		if i%5 == 0 {
			owner = owners[0] // alice has the most tasks
		}
		in := askInput(owner, fmt.Sprintf("walk-%d", i), fmt.Sprintf("question %d", i))
		in.Message.ContextID = contexts[i%len(contexts)]
		clockMu.Lock()
		if i%4 == 0 { // about four tasks per millisecond: plenty of ties
			e.clock.Advance(time.Millisecond)
		}
		clockMu.Unlock()
		tk, _, err := e.tk.Ask(ctx, in)
		if err != nil {
			t.Errorf("ask %d: %v", i, err)
			return
		}
		created[i] = tk
	})
	if t.Failed() {
		t.FailNow()
	}
	// Complete every third task by a reply, cancel every fifth of the rest.
	parallel(n, func(i int) {
		tk := created[i]
		switch {
		case i%3 == 0:
			if _, err := e.ds.Reply(ctx, discussions.Author{ID: replier.ID, Name: replier.Name}, tk.DiscussionID, "answer"); err != nil {
				t.Errorf("reply %d: %v", i, err)
			}
		case i%5 == 0:
			if _, _, err := e.tk.Cancel(ctx, tk.OwnerID, tk.ID); err != nil {
				t.Errorf("cancel %d: %v", i, err)
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	all := make([]tasks.Task, n)
	for i, tk := range created {
		all[i] = e.task(t, tk.ID)
	}
	alice := owners[0]
	var aliceTasks []tasks.Task
	for _, tk := range all {
		if tk.OwnerID == alice.ID {
			aliceTasks = append(aliceTasks, tk)
		}
	}
	// A boundary that is exactly some task's status timestamp.
	boundary := aliceTasks[len(aliceTasks)/2].StatusTime

	states := []a2a.TaskState{"", a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateCanceled, a2a.TaskStateSubmitted}
	sinces := []time.Time{{}, boundary, boundary.Add(time.Hour)}
	combos := 0
	// Alice's listings, and the operator's (every owner: the context filter
	// then has an index of its own).
	for _, who := range []string{alice.ID, ""} {
		pool := aliceTasks
		if who == "" {
			pool = all
		}
		for _, cx := range append(slices.Clone(contexts[1:]), "", "ctx-unknown") {
			for _, st := range states {
				for _, since := range sinces {
					for _, size := range []int{37, 100} {
						combos++
						p := tasks.ListParams{ContextID: cx, State: st, Since: since, PageSize: &size}
						var want []tasks.Task
						for _, tk := range pool {
							if (cx == "" || tk.ContextID == cx) && (st == "" || tk.State == st) && (since.IsZero() || !tk.StatusTime.Before(since)) {
								want = append(want, tk)
							}
						}
						slices.SortFunc(want, order)
						var got []tasks.Task
						for page := 0; ; page++ {
							res, err := e.tk.List(ctx, who, p)
							if err != nil {
								t.Fatalf("%+v page %d: %v", p, page, err)
							}
							if res.TotalSize != len(want) {
								t.Fatalf("%+v: totalSize %d, want %d", p, res.TotalSize, len(want))
							}
							if len(res.Tasks) > size || (res.NextPageToken != "" && len(res.Tasks) != size) {
								t.Fatalf("%+v page %d: %d tasks, next=%q", p, page, len(res.Tasks), res.NextPageToken)
							}
							got = append(got, res.Tasks...)
							if res.NextPageToken == "" {
								break
							}
							p.PageToken = res.NextPageToken
							if page > n {
								t.Fatal("pagination does not end")
							}
						}
						if !eqStrings(ids(got), ids(want)) {
							t.Fatalf("owner=%q ctx=%q state=%q since=%v size=%d:\n got %d: %s\nwant %d: %s",
								who, cx, st, since, size, len(got), describe(got), len(want), describe(want))
						}
					}
				}
			}
		}
	}
	// Tokens are bound to the caller and the filters.
	first, _ := e.tk.List(ctx, alice.ID, tasks.ListParams{PageSize: new(5)})
	if _, err := e.tk.List(ctx, owners[1].ID, tasks.ListParams{PageSize: new(5), PageToken: first.NextPageToken}); err == nil {
		t.Fatal("another agent's page token was accepted")
	}
	if _, err := e.tk.List(ctx, alice.ID, tasks.ListParams{PageSize: new(5), State: a2a.TaskStateWorking, PageToken: first.NextPageToken}); err == nil {
		t.Fatal("a page token was accepted with other filters")
	}
	if _, err := e.tk.List(ctx, alice.ID, tasks.ListParams{PageSize: new(5), PageToken: first.NextPageToken[:len(first.NextPageToken)-2]}); err == nil {
		t.Fatal("a truncated page token was accepted")
	}
	// The operator listing (no owner) sees everyone's tasks.
	op, err := e.tk.List(ctx, "", tasks.ListParams{PageSize: new(100)})
	if err != nil || op.TotalSize != n {
		t.Fatalf("operator list total %d, want %d (%v)", op.TotalSize, n, err)
	}
	t.Logf("%d tasks, %d filter combinations walked", n, combos)
}

func testListSinceInclusive(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a := e.agent(t, "alice")
	t0 := e.clock.Now()
	var made []tasks.Task
	for i := range 3 {
		made = append(made, e.ask(t, a, fmt.Sprintf("m%d", i)))
		e.clock.Advance(time.Millisecond)
	}
	for _, tc := range []struct {
		name  string
		since time.Time
		want  int
	}{
		{"exact boundary is included", t0.Add(time.Millisecond), 2},
		{"first timestamp includes all", t0, 3},
		{"inside a millisecond rounds up", t0.Add(time.Millisecond + time.Microsecond), 1},
		{"half a millisecond before", t0.Add(500 * time.Microsecond), 2},
		{"after the last", t0.Add(3 * time.Millisecond), 0},
		// Out of UnixNano's range (1678-2262) the answer stays exact.
		{"the year 3000", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{"the year 9999", time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC), 0},
		{"the year 1600", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), 3},
		{"the year 1", time.Date(1, 1, 1, 0, 0, 0, 1e6, time.UTC), 3},
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 59, 999e6, time.UTC), 3},
	} {
		res, err := e.tk.List(ctx, a.ID, tasks.ListParams{Since: tc.since})
		if err != nil || len(res.Tasks) != tc.want || res.TotalSize != tc.want {
			t.Errorf("%s: got %d (total %d), want %d (%v)", tc.name, len(res.Tasks), res.TotalSize, tc.want, err)
		}
	}
	_ = made
}

func testListDiscussions(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	var discs []string
	for i := range 25 {
		e.clock.Advance(time.Millisecond)
		discs = append(discs, e.ask(t, a, fmt.Sprintf("m%d", i)).DiscussionID)
	}
	answered := map[string]bool{}
	for i := 0; i < 25; i += 3 {
		e.reply(t, b, discs[i], "answer")
		answered[discs[i]] = true
	}
	for _, st := range []discussions.Status{"", discussions.StatusOpen, discussions.StatusAnswered} {
		var want []string
		for i := len(discs) - 1; i >= 0; i-- {
			if st == "" || (st == discussions.StatusAnswered) == answered[discs[i]] {
				want = append(want, discs[i])
			}
		}
		var got []string
		token := ""
		for range 30 {
			res, err := e.ds.List(ctx, st, new(4), token)
			if err != nil {
				t.Fatal(err)
			}
			if res.TotalSize != len(want) {
				t.Fatalf("status %q: total %d, want %d", st, res.TotalSize, len(want))
			}
			for _, d := range res.Discussions {
				got = append(got, d.ID)
				if st != "" && d.Status != st {
					t.Fatalf("status %q listed a %s discussion", st, d.Status)
				}
			}
			if token = res.NextPageToken; token == "" {
				break
			}
		}
		if !eqStrings(got, want) {
			t.Fatalf("status %q: got %v, want %v", st, got, want)
		}
	}
	first, _ := e.ds.List(ctx, "", new(4), "")
	if _, err := e.ds.List(ctx, discussions.StatusOpen, new(4), first.NextPageToken); err == nil {
		t.Fatal("page token accepted with another filter")
	}
}
