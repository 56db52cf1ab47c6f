package service

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/store"
)

// verdicts answers Verify from a table: what the verifier (package oauth,
// tested against a real provider there and in e2e) concluded of each
// token. This test pins what the service makes of those conclusions.
type verdicts map[string]verdict

type verdict struct {
	tok AccessToken
	err error
}

func (v verdicts) LooksLikeAccessToken(token string) bool { return strings.Count(token, ".") == 2 }

func (v verdicts) Audiences() []string {
	return []string{"https://kfa.example.com", "https://kfa.example.com/mcp"}
}

func (v verdicts) Verify(_ context.Context, token string) (AccessToken, error) {
	r, ok := v[token]
	if !ok {
		return AccessToken{}, &TokenRefusal{Reason: "the token's signature does not verify"}
	}
	return r.tok, r.err
}

// TestAuthenticateAccessTokens: a bearer that is not a kfa token is a
// provider's access token when the server accepts them: its identity is
// one agent (created, or linked only), narrowed to the token's scopes;
// each refusal is 401 with the verifier's reason and costs the address an
// attempt, except a valid token without a kfa scope (403, no attempt).
func TestAuthenticateAccessTokens(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName), store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	ag := agents.NewService(db, now)
	ctx := context.Background()
	const iss = "https://idp.example.com"
	svc := agents.Identity{Issuer: iss, Subject: "svc"}
	gone := agents.Identity{Issuer: iss, Subject: "gone"}
	v := verdicts{
		"a.read.post": {tok: AccessToken{Identity: svc, Name: "build-bot", Scopes: []agents.Scope{agents.ScopeRead, agents.ScopePost}}},
		"a.read.only": {tok: AccessToken{Identity: svc, Name: "build-bot", Scopes: []agents.Scope{agents.ScopeRead}}},
		"a.no.scope":  {err: &TokenRefusal{Reason: "the token grants neither", Scope: agents.ScopeRead}},
		"a.expired.x": {err: &TokenRefusal{Reason: "the token expired at 2026-12-01T09:00:00Z"}},
		"a.new.one":   {tok: AccessToken{Identity: agents.Identity{Issuer: iss, Subject: "new"}, Scopes: []agents.Scope{agents.ScopeRead}}},
		"a.gone.x":    {tok: AccessToken{Identity: gone, Name: "gone", Scopes: []agents.Scope{agents.ScopeRead}}},
	}
	g, err := ag.ResolveIdentity(ctx, gone, "gone", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Revoke(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		token     string
		verifier  AccessTokens
		provision bool
		scopes    string // the caller's agent's, when accepted
		kind      *a2a.Kind
		says      string
		failures  int
	}{
		{name: "read and post", token: "a.read.post", verifier: v, provision: true, scopes: "read,post"},
		{name: "read only narrows the agent", token: "a.read.only", verifier: v, provision: true, scopes: "read"},
		{name: "no kfa scope", token: "a.no.scope", verifier: v, kind: &a2a.PermissionDenied, says: "grants neither"},
		{name: "expired", token: "a.expired.x", verifier: v, kind: &a2a.Unauthenticated, says: "expired at", failures: 1},
		{name: "forged", token: "a.b.c", verifier: v, kind: &a2a.Unauthenticated, says: "does not verify", failures: 1},
		{name: "not linked, no provisioning", token: "a.new.one", verifier: v, kind: &a2a.Unauthenticated,
			says: `subject "new") is not linked to an agent on this server`, failures: 1},
		{name: "revoked", token: "a.gone.x", verifier: v, provision: true, kind: &a2a.Unauthenticated, says: "was revoked", failures: 1},
		{name: "no issuer configured", token: "a.read.post", kind: &a2a.Unauthenticated, says: "invalid, expired or revoked", failures: 1},
		{name: "a kfa token never reaches the verifier", token: "kfa_a.b.c", verifier: v, kind: &a2a.Unauthenticated,
			says: "invalid, expired or revoked", failures: 1},
		{name: "an opaque token", token: "ya29.opaque-token", verifier: v, kind: &a2a.Unauthenticated,
			says: "kfa needs a JWT access token whose audience is \"https://kfa.example.com\" or \"https://kfa.example.com/mcp\"; " +
				"this one is not a JWT (an opaque token, which only its provider can read): ask the provider for a JWT access token " +
				"for this server, with resource=https://kfa.example.com in the token request (RFC 8707), or audience=https://kfa.example.com (Auth0)",
			failures: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failures := ratelimit.New(ratelimit.Config{Events: 10, Per: time.Minute, Now: now})
			s := &Service{deps: Deps{Agents: ag, AuthFailures: failures, AccessTokens: tc.verifier,
				OAuth: OAuthPolicy{AutoProvision: tc.provision}}}
			c, err := s.Authenticate(ctx, Credential{Token: tc.token, Sent: true, Addr: "a"}, true)
			e := ToError(err)
			switch {
			case tc.kind == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.kind == nil:
				if got := strings.Join(c.Agent.ScopeStrings(), ","); got != tc.scopes || c.Agent.Name != "build-bot" || c.Agent.Issuer != iss {
					t.Fatalf("caller %+v, scopes %q, want %q", c.Agent, got, tc.scopes)
				}
			case err == nil || e.Kind != *tc.kind || !strings.Contains(e.Message, tc.says):
				t.Fatalf("err %v, want %s saying %q", err, tc.kind.Reason, tc.says)
			}
			if q, _ := failures.Quota("", "a"); 10-q.Remaining != tc.failures {
				t.Fatalf("%d failed attempts spent, want %d", 10-q.Remaining, tc.failures)
			}
		})
	}
	// Both accepted tokens were one agent, which keeps its own scopes.
	page, err := ag.List(ctx, nil, "")
	if err != nil || page.Total != 2 {
		t.Fatalf("agents: %+v %v", page, err)
	}
	for _, a := range page.Agents {
		if a.Subject == "svc" && strings.Join(a.ScopeStrings(), ",") != "read,post" {
			t.Fatalf("the stored agent was narrowed: %+v", a)
		}
	}
}
