package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// testIdentityReplace: an identity whose agent was revoked comes back
// only when an operator links it to another agent with Replace: the
// revoked agent stays revoked (its kfa tokens dead), keeps no identity
// and a record of where it went, and the identity's next token is the
// new agent. Without Replace the link is refused saying how; an active
// agent's identity never moves; a refused link changes nothing.
func testIdentityReplace(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	id := agents.Identity{Issuer: idpA.Issuer, Subject: "u-erin"}
	old, err := e.ag.ResolveIdentity(ctx, id, "erin", true)
	if err != nil {
		t.Fatal(err)
	}
	oldTok, err := e.ag.Rotate(ctx, old.ID, 0) // a kfa token too, which must stay dead
	if err != nil {
		t.Fatal(err)
	}
	fresh := e.withToken(t, "erin-again")
	var conflict *agents.LinkConflictError
	if _, err := e.ag.LinkAs(ctx, agents.Link{AgentID: fresh.Agent.ID, Identity: id, Replace: true, By: "ops"}); !errors.As(err, &conflict) ||
		conflict.Other != old.ID || !conflict.Replace {
		t.Fatalf("replacing an active agent's identity: %v", err)
	}
	if _, err := e.ag.Revoke(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.Link(ctx, fresh.Agent.ID, id); !errors.As(err, &conflict) || !conflict.OtherRevoked || conflict.Replace {
		t.Fatalf("linking a revoked agent's identity without --replace: %v", err)
	}
	if _, err := e.ag.ResolveIdentity(ctx, id, "erin", true); !errors.Is(err, agents.ErrDisabled) {
		t.Fatalf("the revoked identity before the move: %v", err)
	}
	if got, err := e.ag.Get(ctx, fresh.Agent.ID); err != nil || got.Linked() {
		t.Fatalf("refused links changed the new agent: %+v %v", got, err)
	}

	out, err := e.ag.LinkAs(ctx, agents.Link{AgentID: fresh.Agent.ID, Identity: id, Replace: true, By: "ops"})
	if err != nil || out.Agent.ID != fresh.Agent.ID || out.Agent.Identity() != id || out.Replaced == nil || out.Replaced.ID != old.ID {
		t.Fatalf("replace: %+v %v", out, err)
	}
	if got, err := e.ag.ResolveIdentity(ctx, id, "erin", true); err != nil || got.ID != fresh.Agent.ID {
		t.Fatalf("the identity's next token: %+v %v", got, err)
	}
	gone, err := e.ag.Get(ctx, old.ID)
	if err != nil || gone.Active() || gone.Linked() || gone.Moved == nil || gone.Moved.To != fresh.Agent.ID || gone.Moved.By != "ops" ||
		gone.Moved.Issuer != id.Issuer || gone.Moved.Subject != id.Subject || !gone.Moved.At.Equal(e.clock.Now()) {
		t.Fatalf("the revoked agent after the move: %+v (moved %+v) %v", gone, gone.Moved, err)
	}
	if _, err := e.ag.Authenticate(ctx, oldTok.Token); !errors.Is(err, agents.ErrInvalidToken) {
		t.Fatalf("the revoked agent's kfa token after the move: %v", err)
	}
	if _, err := e.ag.Authenticate(ctx, fresh.Token); err != nil {
		t.Fatalf("the new agent's kfa token: %v", err)
	}
	// Again: nothing to do. Back to the revoked agent: it is revoked.
	if again, err := e.ag.LinkAs(ctx, agents.Link{AgentID: fresh.Agent.ID, Identity: id, Replace: true}); err != nil || again.Changed {
		t.Fatalf("the same replace again: %+v %v", again, err)
	}
	if _, err := e.ag.LinkAs(ctx, agents.Link{AgentID: old.ID, Identity: id, Replace: true}); !errors.Is(err, agents.ErrDisabled) {
		t.Fatalf("moving the identity back to the revoked agent: %v", err)
	}

	// The log: unlinked from the old agent, then linked to the new one.
	var moves []string
	for _, ev := range readAll(t, e.store, changelog.Position{}, 100) {
		if ev.Kind == changelog.AgentUnlinked || (ev.Kind == changelog.AgentLinked && ev.ID == fresh.Agent.ID) {
			moves = append(moves, string(ev.Kind)+" "+ev.ID+" "+ev.Note+" at "+ev.Ref)
		}
	}
	want := []string{"agent.unlinked " + old.ID + " u-erin at " + id.Issuer, "agent.linked " + fresh.Agent.ID + " u-erin at " + id.Issuer}
	if !eqStrings(moves, want) {
		t.Fatalf("log %v, want %v", moves, want)
	}
}

// testConcurrentReplace: operators on both handles move one revoked
// identity to twelve new agents at once, while its tokens arrive: one
// move wins, every other is refused (the identity's agent is then
// active), and every token is refused (before) or the winner (after),
// never another agent, nor one provisioned on the way.
func testConcurrentReplace(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	ctx := context.Background()
	id := agents.Identity{Issuer: idpA.Issuer, Subject: "u-erin"}
	old, err := p.envs[0].ag.ResolveIdentity(ctx, id, "erin", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.envs[1].ag.Revoke(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	news := make([]string, 12)
	for i := range news {
		c, err := p.envs[i%2].ag.Create(ctx, "erin-"+string(rune('a'+i)), []agents.Scope{agents.ScopeRead})
		if err != nil {
			t.Fatal(err)
		}
		news[i] = c.Agent.ID
	}
	resolved := make([]string, 12)
	errs := p.race(24, func(i int, e *env) error {
		if i%2 == 1 {
			a, err := e.ag.ResolveIdentity(ctx, id, "erin", true)
			resolved[i/2] = a.ID
			if errors.Is(err, agents.ErrDisabled) {
				return nil
			}
			return err
		}
		_, err := e.ag.LinkAs(ctx, agents.Link{AgentID: news[i/2], Identity: id, Replace: true, By: "ops"})
		return err
	})
	var moves []error
	for i, err := range errs {
		if i%2 == 0 {
			moves = append(moves, err)
		} else if err != nil {
			t.Fatalf("token %d: %v", i/2, err)
		}
	}
	tally(t, "moves of one identity", moves, 1, agents.ErrLinkConflict)
	winner, err := p.envs[1].ag.ResolveIdentity(ctx, id, "erin", true)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range resolved {
		if got != "" && got != winner.ID {
			t.Fatalf("token %d acted as %s; the identity moved to %s", i, got, winner.ID)
		}
	}
	page, err := p.envs[0].ag.List(ctx, nil, "")
	if err != nil || page.Total != 13 {
		t.Fatalf("agents: %d (%v), want 13: a token provisioned one", page.Total, err)
	}
	if gone, err := p.envs[0].ag.Get(ctx, old.ID); err != nil || gone.Active() || gone.Moved == nil || gone.Moved.To != winner.ID {
		t.Fatalf("the revoked agent: %+v %v", gone, err)
	}
}
