package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

var (
	idpA = agents.Identity{Issuer: "https://idp.example.com/realms/kfa", Subject: "svc-build"}
	idpB = agents.Identity{Issuer: "https://login.example.org", Subject: "svc-build"}
)

// testIdentities: an identity's first token creates its agent, named
// from the token, linked; every later token is that agent; an operator
// links an identity to an existing agent; links never move; a revoked
// agent's identity stays refused, even where agents are created.
func testIdentities(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()

	if _, err := e.ag.ResolveIdentity(ctx, idpA, "build-bot", false); !errors.Is(err, agents.ErrNotLinked) {
		t.Fatalf("an unlinked identity without provisioning: %v", err)
	}
	first, err := e.ag.ResolveIdentity(ctx, idpA, "build-bot", true)
	if err != nil || first.Name != "build-bot" || first.Identity() != idpA || !first.Has(agents.ScopePost) || !first.Active() {
		t.Fatalf("first token: %+v %v", first, err)
	}
	for _, auto := range []bool{true, false} {
		again, err := e.ag.ResolveIdentity(ctx, idpA, "renamed-at-the-provider", auto)
		if err != nil || again.ID != first.ID || again.Name != "build-bot" {
			t.Fatalf("second token (provisioning %v): %+v %v", auto, again, err)
		}
	}
	if got, err := e.ag.Get(ctx, first.ID); err != nil || got.Identity() != idpA {
		t.Fatalf("the agent as stored: %+v %v", got, err)
	}
	// The same subject at another issuer is another agent; its name is
	// qualified by its issuer's host, and a third of the name at that
	// issuer gets a name of its own, the same that ProvisionNames gives
	// it every time: no two agents share a name.
	other, err := e.ag.ResolveIdentity(ctx, idpB, "build-bot", true)
	if err != nil || other.ID == first.ID || other.Name != "build-bot (login.example.org)" {
		t.Fatalf("the subject at another issuer: %+v %v", other, err)
	}
	third := agents.Identity{Issuer: idpB.Issuer, Subject: "svc-build-2"}
	shared, err := e.ag.ResolveIdentity(ctx, third, "build-bot", true)
	if want := agents.ProvisionNames("build-bot", third)[2]; err != nil || shared.Name != want || shared.ID == other.ID {
		t.Fatalf("both names taken: %+v %v, want the name %q", shared, err, want)
	}
	dup, err := e.ag.SharedNames(ctx, []string{first.Name, other.Name, shared.Name})
	for n, sh := range dup {
		if sh || err != nil {
			t.Fatalf("the name %q is shared (%v)", n, err)
		}
	}

	// An operator links an identity to an agent made with a token.
	carol := e.agent(t, "carol")
	idC := agents.Identity{Issuer: idpA.Issuer, Subject: "carol@example.com"}
	linked, err := e.ag.Link(ctx, carol.ID, idC)
	if err != nil || linked.ID != carol.ID || linked.Identity() != idC {
		t.Fatalf("link: %+v %v", linked, err)
	}
	if again, err := e.ag.Link(ctx, carol.ID, idC); err != nil || again.Identity() != idC {
		t.Fatalf("the same link again: %+v %v", again, err)
	}
	if got, err := e.ag.ResolveIdentity(ctx, idC, "carol-at-idp", false); err != nil || got.ID != carol.ID {
		t.Fatalf("a linked identity's token: %+v %v", got, err)
	}
	// Her kfa token keeps working: the link kept her credentials.
	page, err := e.ag.List(ctx, nil, "")
	if err != nil || page.Total != 4 {
		t.Fatalf("agents: %+v %v", page, err)
	}
	var conflict *agents.LinkConflictError
	if _, err := e.ag.Link(ctx, carol.ID, agents.Identity{Issuer: idpB.Issuer, Subject: "carol"}); !errors.As(err, &conflict) || conflict.Has != idC {
		t.Fatalf("a second identity for carol: %v", err)
	}
	dave := e.agent(t, "dave")
	if _, err := e.ag.Link(ctx, dave.ID, idpA); !errors.As(err, &conflict) || conflict.Other != first.ID {
		t.Fatalf("an identity another agent has: %v", err)
	}
	if _, err := e.ag.Link(ctx, "01JD0000000000000000000000", agents.Identity{Issuer: idpA.Issuer, Subject: "nobody"}); !errors.Is(err, agents.ErrNotFound) {
		t.Fatalf("link of an unknown agent: %v", err)
	}
	if _, err := e.ag.Link(ctx, dave.ID, agents.Identity{Issuer: "not a url", Subject: "x"}); !errors.Is(err, agents.ErrInvalidIdentity) {
		t.Fatalf("link of an invalid identity: %v", err)
	}
	if got, err := e.ag.Get(ctx, dave.ID); err != nil || got.Linked() {
		t.Fatalf("refused links changed dave: %+v %v", got, err)
	}

	// Revoking refuses the identity for good: no new agent takes it.
	if _, err := e.ag.Revoke(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.ResolveIdentity(ctx, idpA, "build-bot", true); !errors.Is(err, agents.ErrDisabled) {
		t.Fatalf("a revoked agent's identity: %v", err)
	}
	if _, err := e.ag.Link(ctx, first.ID, agents.Identity{Issuer: idpA.Issuer, Subject: "x"}); !errors.Is(err, agents.ErrDisabled) {
		t.Fatalf("link of a revoked agent: %v", err)
	}
	if got, err := e.ag.Get(ctx, first.ID); err != nil || got.Identity() != idpA || got.Active() {
		t.Fatalf("the revoked agent keeps its identity: %+v %v", got, err)
	}

	// The log says who was created and linked.
	var created, linkedEvents []string
	for _, ev := range readAll(t, e.store, changelog.Position{}, 100) {
		switch ev.Kind {
		case changelog.AgentCreated:
			created = append(created, ev.ID)
		case changelog.AgentLinked:
			linkedEvents = append(linkedEvents, ev.ID+" "+ev.Note+" at "+ev.Ref)
		}
	}
	want := []string{first.ID + " " + idpA.Subject + " at " + idpA.Issuer, other.ID + " " + idpB.Subject + " at " + idpB.Issuer,
		shared.ID + " " + third.Subject + " at " + third.Issuer, carol.ID + " " + idC.Subject + " at " + idC.Issuer}
	if len(created) != 5 || !eqStrings(linkedEvents, want) {
		t.Fatalf("log: created %v, linked %v; want 5 created and %v", created, linkedEvents, want)
	}
}

// testConcurrentProvision: the first tokens of one identity, at once on
// both handles, make one agent, which every caller gets.
func testConcurrentProvision(t *testing.T, pair PairOpener) {
	p := newPeers(t, pair, tasks.Limits{}, discussions.Limits{})
	ctx := context.Background()
	got := make([]string, 12)
	errs := p.race(len(got), func(i int, e *env) error {
		a, err := e.ag.ResolveIdentity(ctx, idpA, "build-bot", true)
		got[i] = a.ID
		return err
	})
	tally(t, "first tokens of one identity", errs, len(errs), nil)
	for i, id := range got {
		if id != got[0] {
			t.Fatalf("caller %d got agent %s, caller 0 %s: one identity made two agents", i, id, got[0])
		}
	}
	page, err := p.envs[1].ag.List(ctx, nil, "")
	if err != nil || page.Total != 1 {
		t.Fatalf("agents: %d (%v), want 1", page.Total, err)
	}
	// Revoked through one handle, refused through the other.
	if _, err := p.envs[0].ag.Revoke(ctx, got[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := p.envs[1].ag.ResolveIdentity(ctx, idpA, "build-bot", true); !errors.Is(err, agents.ErrDisabled) {
		t.Fatalf("after a revoke on the other handle: %v", err)
	}

	// The first tokens of twelve clients that all call themselves alice,
	// at once: twelve agents, no two of one name.
	names := make([]string, 12)
	errs = p.race(len(names), func(i int, e *env) error {
		a, err := e.ag.ResolveIdentity(ctx, agents.Identity{Issuer: idpB.Issuer, Subject: fmt.Sprintf("client-%d", i)}, "alice", true)
		names[i] = agents.NameKey(a.Name)
		return err
	})
	tally(t, "first tokens of twelve alices", errs, len(errs), nil)
	slices.Sort(names)
	if len(slices.Compact(names)) != 12 {
		t.Fatalf("twelve alices were named %q", names)
	}
}
