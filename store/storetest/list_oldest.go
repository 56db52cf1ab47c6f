package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/tasks"
)

// testListOldest: the discussions oldest first (the open questions that
// have waited longest), by status, a page at a time, hidden ones left
// out: the newest-first listing reversed.
func testListOldest(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	var discs []string
	for i := range 11 {
		e.clock.Advance(time.Millisecond)
		discs = append(discs, e.ask(t, a, fmt.Sprintf("m%d", i)).DiscussionID)
	}
	for i := 0; i < 11; i += 4 {
		e.reply(t, b, discs[i], "answer")
	}
	if _, err := e.mod(moderation.Policy{}).Hide(ctx, operator, moderation.Target{ID: discs[5]}, "spam"); err != nil {
		t.Fatal(err)
	}
	walk := func(st discussions.Status, oldest bool) []string {
		var ids []string
		q := discussions.ListQuery{Status: st, PageSize: 3, Oldest: oldest}
		for range 20 {
			p, err := e.store.ListDiscussions(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range p.Discussions {
				ids = append(ids, d.ID)
			}
			if q.After = p.Next; q.After == "" {
				return ids
			}
		}
		t.Fatal("the walk does not end")
		return nil
	}
	for _, st := range []discussions.Status{"", discussions.StatusOpen, discussions.StatusAnswered} {
		newest, oldest := walk(st, false), walk(st, true)
		slices.Reverse(newest)
		if len(oldest) == 0 || !slices.Equal(oldest, newest) || slices.Contains(oldest, discs[5]) {
			t.Fatalf("status %q oldest first: %v, want %v without the hidden %s", st, oldest, newest, discs[5])
		}
	}
}
