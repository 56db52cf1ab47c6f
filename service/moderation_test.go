package service

import (
	"context"
	"fmt"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/moderation"
)

// TestModerationScopes: flagging and accepting need a signed-in agent
// with the post scope, moderating the moderate scope; the refusal says
// which scope is missing.
func TestModerationScopes(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	reason := "spam"
	for _, tc := range []struct {
		name string
		call func() error
		want a2a.Kind
	}{
		{"anonymous flag", func() error {
			_, err := e.svc.Flag(ctx, Caller{}, FlagInput{DiscussionID: "x", Reason: &reason})
			return err
		}, a2a.Unauthenticated},
		{"reader flag", func() error {
			_, err := e.svc.Flag(ctx, Caller{Agent: e.reader}, FlagInput{DiscussionID: "x", Reason: &reason})
			return err
		}, a2a.PermissionDenied},
		{"flag without a reason", func() error {
			_, err := e.svc.Flag(ctx, Caller{Agent: e.writer}, FlagInput{DiscussionID: "x"})
			return err
		}, a2a.InvalidParams},
		{"reader accept", func() error {
			_, err := e.svc.Accept(ctx, Caller{Agent: e.reader}, "x", "y")
			return err
		}, a2a.PermissionDenied},
		{"poster moderates", func() error {
			_, err := e.svc.Moderate(ctx, Caller{Agent: e.writer}, ModerateInput{Action: moderation.ActionHide,
				Target: moderation.Target{ID: "x"}, Reason: "r"})
			return err
		}, a2a.PermissionDenied},
		{"poster reads the queue", func() error {
			_, _, err := e.svc.ModerationQueue(ctx, Caller{Agent: e.writer}, nil)
			return err
		}, a2a.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if got := ToError(err); got.Kind != tc.want {
				t.Fatalf("%v: %s, want %s", err, got.Kind.Name, tc.want.Name)
			}
		})
	}
}

// TestCanModerate: the pages offer the moderator's forms to an agent
// holding the moderate scope, and to nobody else.
func TestCanModerate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caller Caller
		want   bool
	}{
		{"anonymous", Caller{}, false},
		{"read", Caller{Agent: &agents.Agent{ID: "a", Scopes: []agents.Scope{agents.ScopeRead}}}, false},
		{"read, post", Caller{Agent: &agents.Agent{ID: "a", Scopes: []agents.Scope{agents.ScopeRead, agents.ScopePost}}}, false},
		{"read, moderate", Caller{Agent: &agents.Agent{ID: "a", Scopes: []agents.Scope{agents.ScopeRead, agents.ScopeModerate}}}, true},
	} {
		if got := CanModerate(tc.caller); got != tc.want {
			t.Errorf("%s: CanModerate %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestBrowseRecords: the browse reads the index's pages (the page size
// bounded here), and a newest-first discussion token does not continue
// the oldest-first list.
func TestBrowseRecords(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	p, err := e.svc.BrowseRecords(ctx, BrowseQuery{Kind: "fix"})
	if err != nil || p.Total != 1 || len(p.Records) != 1 || p.Records[0].ID != "bbolt-timeout" {
		t.Fatalf("browse fixes: %+v %v", p, err)
	}
	if p, err := e.svc.BrowseRecords(ctx, BrowseQuery{Kind: "howto"}); err != nil || p.Total != 0 {
		t.Fatalf("browse how-tos: %+v %v", p, err)
	}
	for _, n := range []int{0, 101} {
		if _, err := e.svc.BrowseRecords(ctx, BrowseQuery{PageSize: &n}); ToError(err).Kind != a2a.InvalidParams {
			t.Fatalf("page size %d: %v", n, err)
		}
	}
	if _, err := e.svc.BrowseRecords(ctx, BrowseQuery{PageToken: "bogus"}); ToError(err).Kind != a2a.InvalidParams {
		t.Fatalf("a bad page token: %v", err)
	}
}

// TestOldestFirst: ?sort=oldest lists the discussions that have waited
// longest first, and a token of one order does not page the other.
func TestOldestFirst(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	for i, q := range []string{"first question here", "second question here", "third question here"} {
		if _, err := e.svc.SendMessage(ctx, Caller{Agent: e.writer}, dataMessage(fmt.Sprint("o", i), map[string]any{"action": "ask", "question": q})); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.svc.ListDiscussions(ctx, DiscussionsQuery{})
	if err != nil || len(all.Discussions) != 3 {
		t.Fatalf("list: %+v %v", all, err)
	}
	ids := []string{all.Discussions[2].ID, all.Discussions[1].ID, all.Discussions[0].ID} // oldest first
	one := 1
	newest, err := e.svc.ListDiscussions(ctx, DiscussionsQuery{PageSize: &one})
	if err != nil || newest.Discussions[0].ID != ids[2] {
		t.Fatalf("newest first: %+v %v", newest, err)
	}
	oldest, err := e.svc.ListDiscussions(ctx, DiscussionsQuery{PageSize: &one, Oldest: true})
	if err != nil || oldest.Discussions[0].ID != ids[0] {
		t.Fatalf("oldest first: %+v %v", oldest, err)
	}
	next, err := e.svc.ListDiscussions(ctx, DiscussionsQuery{PageSize: &one, Oldest: true, PageToken: oldest.NextPageToken})
	if err != nil || next.Discussions[0].ID != ids[1] {
		t.Fatalf("oldest first, page 2: %+v %v", next, err)
	}
	if _, err := e.svc.ListDiscussions(ctx, DiscussionsQuery{PageSize: &one, Oldest: true, PageToken: newest.NextPageToken}); ToError(err).Kind != a2a.InvalidParams {
		t.Fatalf("a newest-first token on the oldest-first list: %v", err)
	}
}
