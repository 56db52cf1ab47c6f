package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/tasks"
)

// The operator's listings merge more ranges than smallMerge with a heap:
// every owner's tasks, and every owner's in one state, page by page, are
// the tasks newest first, ties by id descending, with their totals.
func TestListMergedManyRanges(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ag := agents.NewService(w.db, time.Now)
	at := w.waiting.CreatedAt.Add(time.Hour)
	for i := range 2 * smallMerge {
		c, err := ag.Create(ctx, fmt.Sprint("owner-", i), []agents.Scope{agents.ScopePost})
		if err != nil {
			t.Fatal(err)
		}
		for j := range 4 {
			// Some tasks share a timestamp: ties go by id.
			res, err := w.db.CreateAsk(ctx, newAsk(c.Agent, fmt.Sprint("m", j), at.Add(time.Duration(i%3+j)*time.Millisecond)))
			if err != nil {
				t.Fatal(err)
			}
			if j == 1 {
				if _, _, err := w.db.CancelTask(ctx, "", res.Task.ID, at.Add(time.Second+time.Duration(i)*time.Millisecond)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var all []tasks.Task
	page, err := w.db.ListTasks(ctx, tasks.ListQuery{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range page.Tasks {
		all = append(all, tk)
	}
	want := func(st a2a.TaskState) []string {
		var ids []string
		model := slices.Clone(all)
		slices.SortFunc(model, func(a, b tasks.Task) int {
			if c := b.StatusTime.Compare(a.StatusTime); c != 0 {
				return c
			}
			return cmp.Compare(b.ID, a.ID)
		})
		for _, tk := range model {
			if st == "" || tk.State == st {
				ids = append(ids, tk.ID)
			}
		}
		return ids
	}
	if len(all) != 4+8*smallMerge || !slices.Equal(taskIDs(all), want("")) {
		t.Fatalf("one page of every task: %d tasks, not in order", len(all))
	}
	for _, st := range []a2a.TaskState{"", a2a.TaskStateWorking, a2a.TaskStateCanceled} {
		for _, size := range []int{1, 5, 7} {
			var got []string
			q := tasks.ListQuery{State: st, PageSize: size}
			for {
				p, err := w.db.ListTasks(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != len(want(st)) {
					t.Fatalf("state %q: total %d, want %d", st, p.Total, len(want(st)))
				}
				got = append(got, taskIDs(p.Tasks)...)
				if p.Next == nil {
					break
				}
				q.After = p.Next
			}
			if !slices.Equal(got, want(st)) {
				t.Errorf("state %q, pages of %d:\n got %v\nwant %v", st, size, got, want(st))
			}
		}
	}
}

func taskIDs(ts []tasks.Task) []string {
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids
}
