package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/tasks"
)

// sessionTTL is the web session lifetime the suite uses.
const sessionTTL = time.Hour

func (e *env) sessions() *sessions.Service {
	return sessions.NewService(e.store, e.store, sessionTTL, e.clock.Now)
}

// withToken creates an agent and returns it with its token.
func (e *env) withToken(t *testing.T, name string) agents.Created {
	t.Helper()
	c, err := e.ag.Create(context.Background(), name, []agents.Scope{agents.ScopeRead, agents.ScopePost})
	if err != nil {
		t.Fatalf("create agent %s: %v", name, err)
	}
	return c
}

func (e *env) signIn(t *testing.T, ss *sessions.Service, token string) sessions.Started {
	t.Helper()
	st, err := ss.Start(context.Background(), token)
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	return st
}

func mustResume(t *testing.T, ss *sessions.Service, id, agentID string) {
	t.Helper()
	a, err := ss.Resume(context.Background(), id)
	if err != nil || a.Agent.ID != agentID {
		t.Fatalf("resume: %+v, %v; want agent %s", a, err, agentID)
	}
}

func mustNotResume(t *testing.T, ss *sessions.Service, id string, want error, what string) {
	t.Helper()
	_, err := ss.Resume(context.Background(), id)
	errIs(t, err, want, what)
}

// testSessions: a session stores only its id's digest, resumes until it
// expires or is ended, and ends at once when its agent is revoked or its
// token rotated (with or without a grace period).
func testSessions(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	ss := e.sessions()
	alice := e.withToken(t, "alice")

	st := e.signIn(t, ss, alice.Token)
	if st.Agent.ID != alice.Agent.ID || !st.ExpiresAt.Equal(e.clock.Now().Add(sessionTTL)) || !sessions.WellFormed(st.ID) {
		t.Fatalf("started: %+v", st)
	}
	stored, err := e.store.GetSession(ctx, sessions.DigestOf(st.ID))
	if err != nil {
		t.Fatal(err)
	}
	if stored.AgentID != alice.Agent.ID || stored.Credential != agents.DigestOf(alice.Token) ||
		!stored.CreatedAt.Equal(e.clock.Now()) || !stored.ExpiresAt.Equal(st.ExpiresAt) || stored.Digest != sessions.DigestOf(st.ID) {
		t.Fatalf("stored session: %+v", stored)
	}
	mustResume(t, ss, st.ID, alice.Agent.ID)

	// Ids that are not sessions.
	for _, id := range []string{"", "short", sessions.NewNonce(), st.ID[:len(st.ID)-1] + "!"} {
		mustNotResume(t, ss, id, sessions.ErrNotFound, "resume "+id)
	}
	if _, err := e.store.GetSession(ctx, sessions.DigestOf(sessions.NewNonce())); !isErr(err, sessions.ErrNotFound) {
		t.Fatalf("get unknown session: %v", err)
	}

	// Tokens that do not sign in.
	for _, tok := range []string{"", "kfa_short", agents.NewToken()} {
		if _, err := ss.Start(ctx, tok); !isErr(err, agents.ErrInvalidToken) {
			t.Fatalf("sign in with %q: %v", tok, err)
		}
	}

	// Sign-out deletes; doing it twice is harmless.
	two := e.signIn(t, ss, alice.Token)
	if err := ss.End(ctx, two.ID); err != nil {
		t.Fatal(err)
	}
	if err := ss.End(ctx, two.ID); err != nil {
		t.Fatalf("second sign-out: %v", err)
	}
	mustNotResume(t, ss, two.ID, sessions.ErrNotFound, "resume after sign-out")
	mustResume(t, ss, st.ID, alice.Agent.ID) // the other session lives on

	// Expiry.
	e.clock.Advance(sessionTTL - time.Millisecond)
	mustResume(t, ss, st.ID, alice.Agent.ID)
	e.clock.Advance(time.Millisecond)
	mustNotResume(t, ss, st.ID, sessions.ErrNotFound, "resume at expiry")
}

// testSessionsEnd: revoking or rotating ends sessions at once.
func testSessionsEnd(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	ss := e.sessions()

	// Rotation without a grace period.
	bob := e.withToken(t, "bob")
	s1 := e.signIn(t, ss, bob.Token)
	r, err := e.ag.Rotate(ctx, bob.Agent.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	mustNotResume(t, ss, s1.ID, sessions.ErrEnded, "resume after rotate")
	s2 := e.signIn(t, ss, r.Token)
	mustResume(t, ss, s2.ID, bob.Agent.ID)

	// Rotation with a grace period: the old token still authenticates for
	// the API, but its session ends and it cannot start a new one.
	r2, err := e.ag.Rotate(ctx, bob.Agent.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.Authenticate(ctx, r.Token); err != nil {
		t.Fatalf("grace token should still authenticate: %v", err)
	}
	mustNotResume(t, ss, s2.ID, sessions.ErrEnded, "resume after rotate with grace")
	if _, err := ss.Start(ctx, r.Token); !isErr(err, sessions.ErrRotatedToken) {
		t.Fatalf("sign in with a grace token: %v", err)
	}
	s3 := e.signIn(t, ss, r2.Token)
	mustResume(t, ss, s3.ID, bob.Agent.ID)

	// Revocation.
	if _, err := e.ag.Revoke(ctx, bob.Agent.ID); err != nil {
		t.Fatal(err)
	}
	mustNotResume(t, ss, s3.ID, sessions.ErrEnded, "resume after revoke")
	if _, err := ss.Start(ctx, r2.Token); !isErr(err, agents.ErrInvalidToken) {
		t.Fatalf("sign in after revoke: %v", err)
	}
}

// testSessionsPurge: a sign-in deletes sessions that have expired, and
// only those.
func testSessionsPurge(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	ss := e.sessions()
	carol := e.withToken(t, "carol")

	old := make([]sessions.Started, sessions.PurgeBatch+1)
	for i := range old {
		old[i] = e.signIn(t, ss, carol.Token)
	}
	e.clock.Advance(sessionTTL / 2)
	young := e.signIn(t, ss, carol.Token)
	e.clock.Advance(sessionTTL / 2) // the old ones expire now
	e.signIn(t, ss, carol.Token)

	gone := 0
	for _, s := range old {
		_, err := e.store.GetSession(ctx, sessions.DigestOf(s.ID))
		switch {
		case isErr(err, sessions.ErrNotFound):
			gone++
		case err != nil:
			t.Fatal(err)
		}
	}
	if gone != sessions.PurgeBatch {
		t.Fatalf("one sign-in purged %d expired sessions, want %d (its batch)", gone, sessions.PurgeBatch)
	}
	mustResume(t, ss, young.ID, carol.Agent.ID)
	e.signIn(t, ss, carol.Token)
	for _, s := range old {
		if _, err := e.store.GetSession(ctx, sessions.DigestOf(s.ID)); !isErr(err, sessions.ErrNotFound) {
			t.Fatalf("expired session survived the next sign-in: %v", err)
		}
	}
	if err := e.store.DeleteSession(ctx, sessions.DigestOf(young.ID)); err != nil {
		t.Fatal(err)
	}
	mustNotResume(t, ss, young.ID, sessions.ErrNotFound, "resume a deleted session")
}

// testSessionsOAuth: a sign-in through an OAuth provider holds no token:
// it resumes while its agent is active, whatever happens to the agent's
// kfa tokens, ends when the agent is revoked, and expires like any other.
// It keeps the scopes its provider granted (stored with it): a read-only
// person's session of an agent holding post cannot post; a grant of
// nothing starts none, and a provider's session stored without its
// scopes (before sessions kept them) has ended.
func testSessionsOAuth(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	ss := e.sessions()
	id := agents.Identity{Issuer: "https://idp.example.com", Subject: "alice@example.com"}
	alice, err := e.ag.ResolveIdentity(ctx, id, "alice", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.StartAgent(ctx, alice, nil); !isErr(err, sessions.ErrNoScope) {
		t.Fatalf("a sign-in granted nothing: %v", err)
	}
	st, err := ss.StartAgent(ctx, alice, []agents.Scope{agents.ScopeRead})
	if err != nil || st.Agent.ID != alice.ID || st.Agent.Has(agents.ScopePost) {
		t.Fatalf("start: %+v %v", st, err)
	}
	mustResume(t, ss, st.ID, alice.ID)
	if a, err := ss.Resume(ctx, st.ID); err != nil || len(a.Agent.Scopes) != 1 || a.Agent.Has(agents.ScopePost) || !alice.Has(agents.ScopePost) {
		t.Fatalf("a read-only sign-in resumed as %+v (%v); its agent %+v", a.Agent, err, alice)
	}
	legacyID := strings.Repeat("L", 43) // the shape of a session id
	legacy := sessions.Session{Digest: sessions.DigestOf(legacyID), AgentID: alice.ID,
		CreatedAt: e.clock.Now(), ExpiresAt: e.clock.Now().Add(time.Hour)}
	if err := e.store.CreateSession(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	mustNotResume(t, ss, legacyID, sessions.ErrEnded, "a provider's session without its scopes")
	e.clock.Advance(sessionTTL - time.Millisecond)
	mustResume(t, ss, st.ID, alice.ID)
	e.clock.Advance(time.Millisecond)
	mustNotResume(t, ss, st.ID, sessions.ErrNotFound, "an expired provider session")

	// Carol's kfa token rotates; her provider session does not care. It
	// ends when she is revoked.
	carol := e.withToken(t, "carol")
	if _, err := e.ag.Link(ctx, carol.Agent.ID, agents.Identity{Issuer: id.Issuer, Subject: "carol"}); err != nil {
		t.Fatal(err)
	}
	cs, err := ss.StartAgent(ctx, carol.Agent, []agents.Scope{agents.ScopeRead, agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.Rotate(ctx, carol.Agent.ID, 0); err != nil {
		t.Fatal(err)
	}
	mustResume(t, ss, cs.ID, carol.Agent.ID)
	revoked, err := e.ag.Revoke(ctx, carol.Agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustNotResume(t, ss, cs.ID, sessions.ErrEnded, "the session of a revoked agent")
	if _, err := ss.StartAgent(ctx, revoked, []agents.Scope{agents.ScopeRead}); !isErr(err, agents.ErrDisabled) {
		t.Fatalf("a revoked agent signs in: %v", err)
	}
}
