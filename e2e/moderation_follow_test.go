package e2e

import (
	"context"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/server"
)

// TestPostgresHideAcrossProcesses: two kfa serve on one PostgreSQL
// database; a discussion answered through A and found by B's search is
// hidden through A's operator, and B's own search index no longer finds
// it within a second (it follows the change log); unhidden, B finds it
// again.
func TestPostgresHideAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	a := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0 })
	b := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0 })
	ctx := context.Background()
	_, alice := a.agent("alice")
	_, bob := a.agent("bob")

	question := "How do I resize a pangolin volume online?"
	disc := discussionOf(t, a.ask(alice, "hide-across-1", question))
	if _, err := bob.Reply(ctx, disc, "Grow the pangolin volume with the online resize flag."); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, b, "an answered discussion on A")
	if !searchFinds(t, b, "pangolin volume online resize", disc) {
		t.Fatal("B's search does not find the discussion answered on A")
	}
	for _, step := range []struct {
		action moderation.Action
		found  bool
	}{{moderation.ActionHide, false}, {moderation.ActionUnhide, true}} {
		if _, err := a.admin.Moderate(ctx, step.action, api.ModerationRequest{ID: disc, Reason: "test", By: "e2e"}); err != nil {
			t.Fatal(err)
		}
		caughtUp(t, b, string(step.action)+" on A")
		if got := searchFinds(t, b, "pangolin volume online resize", disc); got != step.found {
			t.Fatalf("after %s on A, B's search finds the discussion: %v", step.action, got)
		}
		if _, err := b.anon.Discussion(ctx, disc); (err == nil) != step.found {
			t.Fatalf("after %s on A, B's API reads it: %v", step.action, err)
		}
	}
}
