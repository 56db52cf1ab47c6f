package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/tasks"
)

func isErr(err, target error) bool { return errors.Is(err, target) }

func testAgents(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()

	c, err := e.ag.Create(ctx, "alice", []agents.Scope{agents.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.ag.Authenticate(ctx, c.Token)
	if err != nil || got.ID != c.Agent.ID || got.Name != "alice" || got.Has(agents.ScopePost) || !got.Has(agents.ScopeRead) {
		t.Fatalf("authenticate new token: %+v, %v", got, err)
	}
	if _, err := e.ag.Authenticate(ctx, agents.NewToken()); !isErr(err, agents.ErrInvalidToken) {
		t.Fatalf("unknown token: %v", err)
	}
	if _, err := e.ag.Authenticate(ctx, "kfa_short"); !isErr(err, agents.ErrInvalidToken) {
		t.Fatalf("malformed token: %v", err)
	}

	// Rotation: same agent id, old token dead at once, new one alive.
	r, err := e.ag.Rotate(ctx, c.Agent.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Agent.ID != c.Agent.ID || r.Token == c.Token {
		t.Fatalf("rotate: %+v", r)
	}
	if _, err := e.ag.Authenticate(ctx, c.Token); !isErr(err, agents.ErrInvalidToken) {
		t.Fatalf("old token after rotate: %v", err)
	}
	if got, err := e.ag.Authenticate(ctx, r.Token); err != nil || got.ID != c.Agent.ID {
		t.Fatalf("new token after rotate: %+v %v", got, err)
	}

	// Revocation: the next request fails; revoking again changes nothing.
	rv, err := e.ag.Revoke(ctx, c.Agent.ID)
	if err != nil || rv.Active() {
		t.Fatalf("revoke: %+v %v", rv, err)
	}
	if _, err := e.ag.Authenticate(ctx, r.Token); !isErr(err, agents.ErrInvalidToken) {
		t.Fatalf("token after revoke: %v", err)
	}
	if again, err := e.ag.Revoke(ctx, c.Agent.ID); err != nil || !again.DisabledAt.Equal(rv.DisabledAt) {
		t.Fatalf("second revoke: %+v %v", again, err)
	}
	if _, err := e.ag.Rotate(ctx, c.Agent.ID, 0); !isErr(err, agents.ErrDisabled) {
		t.Fatalf("rotate revoked agent: %v", err)
	}
	if _, err := e.ag.Get(ctx, "01JD0000000000000000000000"); !isErr(err, agents.ErrNotFound) {
		t.Fatalf("get unknown agent: %v", err)
	}
	if _, err := e.ag.Revoke(ctx, "nope"); !isErr(err, agents.ErrNotFound) {
		t.Fatalf("revoke unknown agent: %v", err)
	}

	b := e.agent(t, "bob")
	page, err := e.ag.List(ctx, nil, "")
	list := page.Agents
	if err != nil || len(list) != 2 || list[0].ID != c.Agent.ID || list[1].ID != b.ID || page.Total != 2 || page.Next != "" {
		t.Fatalf("list: %+v %v", page, err)
	}
	if list[0].Active() || !list[1].Active() {
		t.Fatalf("list states: %+v", list)
	}
	// A page at a time, oldest first.
	carol := e.agent(t, "carol")
	var walked []string
	token := ""
	for range 5 {
		p, err := e.ag.List(ctx, new(2), token)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range p.Agents {
			walked = append(walked, a.ID)
		}
		if token = p.Next; token == "" {
			break
		}
	}
	if !eqStrings(walked, []string{c.Agent.ID, b.ID, carol.ID}) {
		t.Fatalf("paged list: %v", walked)
	}
	for _, bad := range []struct {
		size  int
		token string
	}{{agents.MaxPageSize + 1, ""}, {-1, ""}, {0, ""}, {2, "not-an-id"}} {
		if _, err := e.ag.List(ctx, &bad.size, bad.token); err == nil {
			t.Fatalf("list with page size %d, token %q was accepted", bad.size, bad.token)
		}
	}
}

func testRotateGrace(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	c, err := e.ag.Create(ctx, "alice", []agents.Scope{agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.ag.Rotate(ctx, c.Agent.ID, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{c.Token, r.Token} {
		if _, err := e.ag.Authenticate(ctx, tok); err != nil {
			t.Fatalf("within grace: %v", err)
		}
	}
	e.clock.Advance(10 * time.Minute)
	if _, err := e.ag.Authenticate(ctx, c.Token); !isErr(err, agents.ErrInvalidToken) {
		t.Fatalf("old token after grace: %v", err)
	}
	if _, err := e.ag.Authenticate(ctx, r.Token); err != nil {
		t.Fatalf("new token after grace: %v", err)
	}
	// A second rotation without grace ends every earlier token.
	r2, err := e.ag.Rotate(ctx, c.Agent.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{c.Token, r.Token} {
		if _, err := e.ag.Authenticate(ctx, tok); !isErr(err, agents.ErrInvalidToken) {
			t.Fatalf("earlier token after second rotate: %v", err)
		}
	}
	if _, err := e.ag.Authenticate(ctx, r2.Token); err != nil {
		t.Fatal(err)
	}
}
