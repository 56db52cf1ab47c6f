package service

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/store"
)

// TestAuthenticate is the one credential check of every surface: what a
// request presents, against the agents, the per-address budget of failed
// attempts and the per-agent request rate.
func TestAuthenticate(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName), store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	ag := agents.NewService(db, now)
	alice, err := ag.Create(context.Background(), "alice", []agents.Scope{agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	conflict := a2a.Errorf(a2a.InvalidRequest, "two tokens")
	for _, tc := range []struct {
		name     string
		cred     Credential
		required bool
		agent    string // the caller's agent id; "" anonymous
		kind     *a2a.Kind
		noCred   bool // a challenge without error="invalid_token"
		failures int  // failed attempts the address spent
		requests int  // requests the agent spent
	}{
		{name: "none, optional", cred: Credential{Addr: "a"}},
		{name: "none, required", cred: Credential{Addr: "a"}, required: true, kind: &a2a.Unauthenticated, noCred: true},
		{name: "good token", cred: Credential{Token: alice.Token, Sent: true, Addr: "a"}, agent: alice.Agent.ID, requests: 1},
		{name: "unknown token", cred: Credential{Token: "kfa_nope", Sent: true, Addr: "a"}, kind: &a2a.Unauthenticated, failures: 1},
		{name: "unreadable headers", cred: Credential{Sent: true, Err: errors.New("empty bearer token"), Addr: "a"},
			kind: &a2a.Unauthenticated, failures: 1},
		{name: "two different tokens", cred: Credential{Sent: true, Err: conflict, Addr: "a"}, kind: &a2a.InvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failures := ratelimit.New(ratelimit.Config{Events: 10, Per: time.Minute, Now: now})
			requests := ratelimit.New(ratelimit.Config{Events: 10, Per: time.Minute, Now: now})
			s := &Service{deps: Deps{Agents: ag, AuthFailures: failures, RequestRate: requests}}
			ctx, report := ratelimit.WithReport(context.Background())
			c, err := s.Authenticate(ctx, tc.cred, tc.required)
			switch e := ToError(err); {
			case tc.kind == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.kind != nil && (err == nil || e.Kind != *tc.kind):
				t.Fatalf("err %v, want %s", err, tc.kind.Reason)
			case tc.kind != nil && e.NoCredential != tc.noCred:
				t.Fatalf("NoCredential %v, want %v", e.NoCredential, tc.noCred)
			}
			if got := c.Addr; got != "a" {
				t.Fatalf("addr %q", got)
			}
			if id := agentID(c); id != tc.agent {
				t.Fatalf("agent %q, want %q", id, tc.agent)
			}
			if q, _ := failures.Quota("", "a"); 10-q.Remaining != tc.failures {
				t.Fatalf("%d failed attempts spent, want %d", 10-q.Remaining, tc.failures)
			}
			if q, _ := requests.Quota("", "agent:"+alice.Agent.ID); 10-q.Remaining != tc.requests {
				t.Fatalf("%d requests spent, want %d", 10-q.Remaining, tc.requests)
			}
			if _, noted := report.Quota(); noted != (tc.requests > 0) {
				t.Fatalf("request quota noted: %v", noted)
			}
		})
	}

	t.Run("an address out of attempts is refused before its token is read", func(t *testing.T) {
		failures := ratelimit.New(ratelimit.Config{Events: 1, Per: time.Minute, Now: now})
		s := &Service{deps: Deps{Agents: ag, AuthFailures: failures}}
		if _, err := s.Authenticate(context.Background(), Credential{Token: "kfa_nope", Sent: true, Addr: "b"}, true); err == nil {
			t.Fatal("a bad token passed")
		}
		_, err := s.Authenticate(context.Background(), Credential{Token: alice.Token, Sent: true, Addr: "b"}, true)
		if e := ToError(err); e.Kind != a2a.RateLimited || e.RetryAfter <= 0 {
			t.Fatalf("the good token of a blocked address: %v", err)
		}
	})
	t.Run("an agent over its request rate is refused", func(t *testing.T) {
		requests := ratelimit.New(ratelimit.Config{Events: 1, Per: time.Minute, Now: now})
		s := &Service{deps: Deps{Agents: ag, RequestRate: requests}}
		cred := Credential{Token: alice.Token, Sent: true, Addr: "c"}
		if _, err := s.Authenticate(context.Background(), cred, true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(context.Background(), cred, true); ToError(err).Kind != a2a.RateLimited {
			t.Fatalf("the second request of a one-request rate: %v", err)
		}
	})
}

func agentID(c Caller) string {
	if c.Agent == nil {
		return ""
	}
	return c.Agent.ID
}
