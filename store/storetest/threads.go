package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/tasks"
)

// testThreads: GetThread is GetDiscussion and ListReplies of the same
// query, read together: for a discussion shown or hidden, with its hidden
// replies left out or listed, page by page, and for no discussion.
func testThreads(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	shown, hidden := e.ask(t, a, "m1").DiscussionID, e.ask(t, a, "m2").DiscussionID
	m := e.mod(moderation.Policy{})
	for _, d := range []string{shown, hidden} {
		for i := range 5 {
			e.clock.Advance(time.Millisecond)
			r := e.reply(t, b, d, fmt.Sprint("reply ", i))
			if i%2 == 1 {
				if _, err := m.Hide(ctx, operator, replyTarget(r.Reply), "spam"); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if _, err := m.Hide(ctx, operator, discussionTarget(hidden), "spam"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{shown, hidden} {
		for _, all := range []bool{false, true} {
			q := discussions.ReplyQuery{DiscussionID: d, PageSize: 2, IncludeHidden: all}
			for page := 0; ; page++ {
				gd, gp, err := e.store.GetThread(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				wd, err := e.store.GetDiscussion(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				wp, err := e.store.ListReplies(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gd, wd) || !reflect.DeepEqual(gp, wp) {
					t.Fatalf("discussion %s, hidden replies %t, page %d: GetThread %+v %+v, want %+v %+v", d, all, page, gd, gp, wd, wp)
				}
				if gp.Next == "" {
					break
				}
				q.After = gp.Next
			}
		}
	}
	for _, id := range []string{"01JZZZZZZZZZZZZZZZZZZZZZZZ", "not-a-ulid"} {
		if _, _, err := e.store.GetThread(ctx, discussions.ReplyQuery{DiscussionID: id, PageSize: 2}); !isErr(err, discussions.ErrNotFound) {
			t.Fatalf("GetThread of %q: %v, want ErrNotFound", id, err)
		}
	}
}
