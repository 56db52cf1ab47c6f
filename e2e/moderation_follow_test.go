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
// it (it follows the change log, woken by A's NOTIFY); unhidden, B finds
// it again. Hiding its only answer on A opens it again on B (B's search
// reads the discussion again on the event that says so).
func TestPostgresHideAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	a := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0 })
	b := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0; wakeOnly(c) })
	ctx := context.Background()
	_, alice := a.agent("alice")
	_, bob := a.agent("bob")

	question := "How do I resize a pangolin volume online?"
	disc := discussionOf(t, a.ask(alice, "hide-across-1", question))
	answer, err := bob.Reply(ctx, disc, "Grow the pangolin volume with the online resize flag.")
	if err != nil {
		t.Fatal(err)
	}
	followed(t, a, b, "an answered discussion on A")
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
		followed(t, a, b, string(step.action)+" on A")
		if got := searchFinds(t, b, "pangolin volume online resize", disc); got != step.found {
			t.Fatalf("after %s on A, B's search finds the discussion: %v", step.action, got)
		}
		if _, err := b.anon.Discussion(ctx, disc); (err == nil) != step.found {
			t.Fatalf("after %s on A, B's API reads it: %v", step.action, err)
		}
	}
	// Hiding its only answer on A opens the discussion again on B's API
	// and B's search; unhiding it answers it again.
	for _, step := range []struct {
		action     moderation.Action
		status, at string
	}{{moderation.ActionHide, "open", ""}, {moderation.ActionUnhide, "answered", answer.Reply.CreatedAt}} {
		if _, err := a.admin.Moderate(ctx, step.action, api.ModerationRequest{ID: answer.Reply.ID, Reason: "test", By: "e2e"}); err != nil {
			t.Fatal(err)
		}
		followed(t, a, b, string(step.action)+" of the answer on A")
		if d, err := b.anon.Discussion(ctx, disc); err != nil || d.Status != step.status || d.AnsweredAt != step.at {
			t.Fatalf("after %s of the answer on A, B's API: %s at %q (%v), want %s", step.action, d.Status, d.AnsweredAt, err, step.status)
		}
		found := false
		for _, r := range a2aSearchResults(t, b, question) {
			if r.ID == disc {
				found = true
				if r.Status != step.status || r.AnsweredAt != step.at {
					t.Fatalf("after %s of the answer on A, B's search: %s at %q, want %s at %q", step.action, r.Status, r.AnsweredAt,
						step.status, step.at)
				}
			}
		}
		if !found {
			t.Fatalf("after %s of the answer on A, B's search does not find the discussion", step.action)
		}
	}
}
