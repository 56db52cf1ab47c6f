package agents

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
)

// countingStore is a Store of one agent and its token, counting lookups;
// revoked refuses the token.
type countingStore struct {
	Store
	agent   Agent
	cred    Credential
	lookups atomic.Int64
	revoked atomic.Bool
}

func (s *countingStore) Authenticate(_ context.Context, d Digest) (Agent, Credential, error) {
	s.lookups.Add(1)
	if s.revoked.Load() || d != s.cred.Digest {
		return Agent{}, Credential{}, ErrInvalidToken
	}
	return s.agent, s.cred, nil
}

func (s *countingStore) RevokeAgent(_ context.Context, id string, at time.Time) (Agent, error) {
	s.revoked.Store(true)
	a := s.agent
	a.DisabledAt = at
	return a, nil
}

func cacheSetup(t *testing.T) (*Service, *countingStore, *CredCache, *atomic.Bool, string) {
	t.Helper()
	now := time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)
	token := NewToken()
	st := &countingStore{
		agent: Agent{ID: "01JD0000000000000000000001", Name: "alice", Scopes: []Scope{ScopePost}, CreatedAt: now},
		cred:  Credential{Digest: DigestOf(token), AgentID: "01JD0000000000000000000001", CreatedAt: now},
	}
	fresh := &atomic.Bool{}
	fresh.Store(true)
	c := NewCredCache(fresh.Load)
	svc := NewService(st, func() time.Time { return now })
	svc.UseCache(c)
	return svc, st, c, fresh, token
}

// TestCredCache: a token is looked up once while the cache is trusted;
// every time while its follower is not fresh; again after a revoke or
// rotate event from the log; and a revoke through the service refuses the
// token at once, before any event.
func TestCredCache(t *testing.T) {
	ctx := context.Background()
	svc, st, c, fresh, token := cacheSetup(t)
	auth := func(want error) {
		t.Helper()
		if _, err := svc.Authenticate(ctx, token); err != want {
			t.Fatalf("Authenticate: %v, want %v", err, want)
		}
	}
	auth(nil)
	auth(nil)
	if n := st.lookups.Load(); n != 1 {
		t.Fatalf("%d lookups for two requests, want 1 (the second from the cache)", n)
	}
	fresh.Store(false)
	auth(nil)
	auth(nil)
	if n := st.lookups.Load(); n != 3 {
		t.Fatalf("%d lookups, want every request to read the store while the follower is not fresh", n)
	}
	fresh.Store(true)
	if err := c.Apply(ctx, []changelog.Event{{Kind: changelog.AgentRotated, ID: st.agent.ID}}); err != nil {
		t.Fatal(err)
	}
	auth(nil)
	if n := st.lookups.Load(); n != 4 || c.Len() != 1 {
		t.Fatalf("%d lookups, %d cached after a rotation event; want the token read again", n, c.Len())
	}
	if _, err := svc.Revoke(ctx, st.agent.ID); err != nil {
		t.Fatal(err)
	}
	auth(ErrInvalidToken)
	if c.Len() != 0 {
		t.Fatalf("%d answers cached after the revoke", c.Len())
	}
}

// TestCredCacheKeepsNoAnswerReadBeforeADrop: an answer read before a drop
// and put after it is not kept.
func TestCredCacheKeepsNoAnswerReadBeforeADrop(t *testing.T) {
	c := NewCredCache(func() bool { return true })
	d := DigestOf(NewToken())
	_, gen, _ := c.get(d)
	c.Drop("01JD0000000000000000000001")
	c.put(d, credEntry{agent: Agent{ID: "01JD0000000000000000000001"}}, gen)
	if _, _, ok := c.get(d); ok || c.Len() != 0 {
		t.Fatal("an answer read before the drop was kept")
	}
}

// identityStore is a Store of one agent linked to an identity, counting
// lookups; revoked disables the agent (the link stays).
type identityStore struct {
	Store
	agent   Agent
	lookups atomic.Int64
	revoked atomic.Bool
}

func (s *identityStore) AgentByIdentity(_ context.Context, id Identity) (Agent, error) {
	s.lookups.Add(1)
	if id != s.agent.Identity() {
		return Agent{}, ErrNotLinked
	}
	a := s.agent
	if s.revoked.Load() {
		a.DisabledAt = a.CreatedAt
	}
	return a, nil
}

// TestCredCacheIdentities: an identity's agent is looked up once while
// the cache is trusted, and again after a revocation from the log (made
// by another process), which refuses it.
func TestCredCacheIdentities(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)
	id := Identity{Issuer: "https://idp.example.com", Subject: "svc"}
	st := &identityStore{agent: Agent{ID: "01JD0000000000000000000001", Name: "svc", Scopes: ProvisionScopes, CreatedAt: now,
		Issuer: id.Issuer, Subject: id.Subject}}
	c := NewCredCache(func() bool { return true })
	svc := NewService(st, func() time.Time { return now })
	svc.UseCache(c)
	for range 3 {
		if a, err := svc.ResolveIdentity(ctx, id, "svc", true); err != nil || a.ID != st.agent.ID {
			t.Fatalf("resolve: %+v %v", a, err)
		}
	}
	if n := st.lookups.Load(); n != 1 {
		t.Fatalf("%d lookups for three tokens, want 1", n)
	}
	st.revoked.Store(true)
	if _, err := svc.ResolveIdentity(ctx, id, "svc", true); err != nil {
		t.Fatalf("before the event reaches this process the cache answers: %v", err)
	}
	if err := c.Apply(ctx, []changelog.Event{{Kind: changelog.AgentRevoked, ID: st.agent.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ResolveIdentity(ctx, id, "svc", true); err != ErrDisabled {
		t.Fatalf("after the revocation event: %v, want ErrDisabled", err)
	}
}

// TestCredCacheForget: after the database lost events (Forget), every
// token is read from the store again.
func TestCredCacheForget(t *testing.T) {
	ctx := context.Background()
	svc, st, c, _, token := cacheSetup(t)
	if _, err := svc.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	c.Forget(ctx)
	if c.Len() != 0 {
		t.Fatalf("%d answers cached after Forget", c.Len())
	}
	if _, err := svc.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	if n := st.lookups.Load(); n != 2 {
		t.Fatalf("%d lookups, want the token read again after Forget", n)
	}
}
