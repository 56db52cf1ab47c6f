package sessions

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
)

func TestDecideCreate(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration, b byte) Session { return Session{Digest: Digest{b}, ExpiresAt: now.Add(d)} }
	s := Session{Digest: Digest{9}, CreatedAt: now, ExpiresAt: now.Add(DefaultTTL)}
	alice := &agents.Agent{ID: "alice"}
	out, err := DecideCreate(alice, []Session{at(-time.Hour, 1), at(0, 2), at(time.Millisecond, 3), at(time.Hour, 4)}, s)
	if err != nil || out.Session.Digest != s.Digest || len(out.Purge) != 2 || out.Purge[0].Digest != (Digest{1}) ||
		out.Purge[1].Digest != (Digest{2}) {
		t.Fatalf("purge %+v", out.Purge)
	}
	var many []Session
	for i := range PurgeBatch + 5 {
		many = append(many, at(-time.Duration(PurgeBatch+5-i)*time.Second, byte(i)))
	}
	if got, err := DecideCreate(alice, many, s); err != nil || len(got.Purge) != PurgeBatch {
		t.Fatalf("purged %d, at most %d", len(got.Purge), PurgeBatch)
	}
	for _, a := range []*agents.Agent{{ID: "alice", DisabledAt: now}, nil} {
		if out, err := DecideCreate(a, nil, s); !errors.Is(err, agents.ErrRevoked) || out.Session.Digest != (Digest{}) {
			t.Fatalf("a revoked agent's session: %+v %v", out, err)
		}
	}
	if DecideEnd(nil) || !DecideEnd(&s) {
		t.Fatal("DecideEnd")
	}
}

// TestProviderScopes: a provider's sign-in holds read and post as far as
// both the grant and the agent allow (post implies read), and moderate
// when the agent holds it, which no provider is asked for; resumed, it
// does no more than it was granted nor than its agent may now.
func TestProviderScopes(t *testing.T) {
	const r, p, m = agents.ScopeRead, agents.ScopePost, agents.ScopeModerate
	for _, tc := range []struct {
		name           string
		agent, granted []agents.Scope
		want           []agents.Scope
	}{
		{"a read-only person", []agents.Scope{r, p}, []agents.Scope{r}, []agents.Scope{r}},
		{"granted both", []agents.Scope{r, p}, []agents.Scope{r, p}, []agents.Scope{r, p}},
		{"post alone implies read", []agents.Scope{r, p}, []agents.Scope{p}, []agents.Scope{p}},
		{"granted nothing", []agents.Scope{r, p}, nil, nil},
		{"granted more than the agent holds", []agents.Scope{r}, []agents.Scope{r, p}, []agents.Scope{r}},
		{"an agent of post only, granted read", []agents.Scope{p}, []agents.Scope{r}, []agents.Scope{r}},
		{"a moderator keeps moderate", []agents.Scope{r, m}, []agents.Scope{r, p}, []agents.Scope{r, m}},
		{"a moderator granted nothing", []agents.Scope{r, m}, nil, []agents.Scope{m}},
		{"moderate is never granted", []agents.Scope{r}, []agents.Scope{r, m}, []agents.Scope{r}},
	} {
		got := ProviderScopes(agents.Agent{Scopes: tc.agent}, tc.granted)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	a := agents.Agent{Scopes: []agents.Scope{r, p}}
	if got := (Session{Scopes: []agents.Scope{r}}).Within(a); !slices.Equal(got.Scopes, []agents.Scope{r}) || got.Has(p) {
		t.Fatalf("a read-only session: %v", got.Scopes)
	}
	if got := (Session{Scopes: []agents.Scope{r, p}}).Within(agents.Agent{Scopes: []agents.Scope{r}}); !slices.Equal(got.Scopes, []agents.Scope{r}) {
		t.Fatalf("a session wider than its agent now: %v", got.Scopes)
	}
	if got := (Session{}).Within(a); !slices.Equal(got.Scopes, a.Scopes) {
		t.Fatalf("a token session: %v", got.Scopes)
	}
}
