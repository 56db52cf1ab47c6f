package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/oidctest"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
)

// An OAuth identity's agent over its life, end to end: made at the first
// token (once, however many arrive; named apart from every other agent),
// revoked for good, and let back in as a new agent by an operator.

// TestOAuthRevoke: a revoked agent's identity is refused at once, even
// with an unexpired token, and stays refused.
func TestOAuthRevoke(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	revokedOn(t, p, h, h)
}

// TestPostgresOAuthRevokeAcrossProcesses: an identity's agent revoked
// through process A is refused on process B, which had it cached: B's
// followers learn it from the change log, woken by A's NOTIFY alone, and
// its cache lets the agent go.
func TestPostgresOAuthRevokeAcrossProcesses(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	url := pgtest.URL(t)
	a := startOAuth(t, p, func(c *server.Config) { c.Store = url })
	b := startOAuth(t, p, func(c *server.Config) { c.Store = url; wakeOnly(c) })
	revokedOn(t, p, a, b)
}

// revokedOn has b cache an identity's agent, revokes it through a, and
// checks that b refuses the identity's tokens, old and new.
func revokedOn(t *testing.T, p *oidctest.Provider, a, b *harness) {
	t.Helper()
	ctx := context.Background()
	tok := p.Token(t, "svc", "read", "post")
	onB := b.anon.WithToken(tok)
	me, err := onB.Whoami(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := onB.Whoami(ctx); err != nil { // from B's cache
		t.Fatal(err)
	}
	if b.srv.CredCache().Len() == 0 {
		t.Fatal("B's credential cache holds nothing after two authentications")
	}
	if _, err := a.admin.RevokeAgent(ctx, me.ID); err != nil {
		t.Fatal(err)
	}
	followed(t, a, b, "the revocation")
	credsDropped(t, b, "the revocation")
	for _, c := range []*client.Client{onB, b.anon.WithToken(p.Token(t, "svc", "read", "post"))} {
		_, err := c.Whoami(ctx)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized || !strings.Contains(ce.Error(), "revoked") {
			t.Fatalf("the revoked identity's token on B: %v, want 401 saying it was revoked", err)
		}
	}
	if n, err := b.admin.Agents(ctx, 0, ""); err != nil || n.TotalSize != 1 {
		t.Fatalf("a token of the revoked identity made another agent: %+v (%v)", n, err)
	}
}

// TestOAuthFirstTokensAtOnce: the first tokens of one identity, sent at
// once, make one agent.
func TestOAuthFirstTokensAtOnce(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	firstTokensAtOnce(t, p, h, h)
}

// TestPostgresOAuthFirstTokensTwoProcesses: the first tokens of one
// identity, sent at once to two processes over one database, make one
// agent.
func TestPostgresOAuthFirstTokensTwoProcesses(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	url := pgtest.URL(t)
	a := startOAuth(t, p, func(c *server.Config) { c.Store = url })
	b := startOAuth(t, p, func(c *server.Config) { c.Store = url })
	firstTokensAtOnce(t, p, a, b)
}

// firstTokensAtOnce sends an identity's first tokens at once, half to a,
// half to b, and checks they are one agent.
func firstTokensAtOnce(t *testing.T, p *oidctest.Provider, a, b *harness) {
	t.Helper()
	tokens := make([]string, 8)
	for i := range tokens {
		tokens[i] = p.Token(t, "svc", "read")
	}
	ids := make([]string, len(tokens))
	var wg sync.WaitGroup
	for i, tok := range tokens {
		h := a
		if i%2 == 1 {
			h = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if me, err := h.anon.WithToken(tok).Whoami(context.Background()); err == nil {
				ids[i] = me.ID
			}
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("token %d is agent %q, token 0 %q", i, id, ids[0])
		}
	}
	if n, err := b.admin.Agents(context.Background(), 0, ""); err != nil || n.TotalSize != 1 {
		t.Fatalf("agents: %+v (%v)", n, err)
	}
}

// TestOAuthProvisionedNames: the first tokens of clients that all call
// themselves alice, beside a kfa agent named alice, make agents of
// distinct names ("alice (127.0.0.1)", then names of each identity's
// own), each the same at the next token.
func TestOAuthProvisionedNames(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	for i := range 4 {
		p.AddClient(oidctest.Client{ID: fmt.Sprintf("alice-%d", i), Secret: "s", Scopes: []string{"read"}, Audience: []string{publicURL},
			Username: "alice"})
	}
	h := startOAuth(t, p, nil)
	h.agent("alice")
	seen := map[string]bool{"alice": true}
	for i := range 4 {
		c := h.anon.WithToken(p.Token(t, fmt.Sprintf("alice-%d", i), "read"))
		me, err := c.Whoami(bg())
		if err != nil {
			t.Fatal(err)
		}
		if seen[me.Name] || !strings.HasPrefix(me.Name, "alice (127.0.0.1") {
			t.Fatalf("client %d is named %q; names so far %v", i, me.Name, seen)
		}
		seen[me.Name] = true
		if again, err := h.anon.WithToken(p.Token(t, fmt.Sprintf("alice-%d", i), "read")).Whoami(bg()); err != nil || again.Name != me.Name {
			t.Fatalf("client %d's next token: %+v %v", i, again, err)
		}
	}
}

// TestOAuthReplaceRevoked: the way back for a revoked identity: an
// operator links it to a new agent with Replace, and its next token (an
// old one too) is that agent, while the revoked agent stays revoked.
func TestOAuthReplaceRevoked(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	revokedOn(t, p, h, h)
	replacedOn(t, p, h, h)
}

// TestPostgresOAuthReplaceAcrossProcesses: an identity moved off its
// revoked agent through process A is the new agent on process B, which
// had the revoked agent cached (B follows the log, woken by A's NOTIFY).
func TestPostgresOAuthReplaceAcrossProcesses(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	url := pgtest.URL(t)
	a := startOAuth(t, p, func(c *server.Config) { c.Store = url })
	b := startOAuth(t, p, func(c *server.Config) { c.Store = url; wakeOnly(c) })
	revokedOn(t, p, a, b)
	replacedOn(t, p, a, b)
}

// replacedOn moves the identity revokedOn revoked to a new agent through
// a, and checks that b takes its tokens as the new agent.
func replacedOn(t *testing.T, p *oidctest.Provider, a, b *harness) {
	t.Helper()
	ctx := context.Background()
	list, err := a.admin.Agents(ctx, 0, "")
	if err != nil || len(list.Agents) != 1 {
		t.Fatalf("agents: %+v %v", list, err)
	}
	old := list.Agents[0]
	fresh, _ := a.agent("build-bot-2")
	out, err := a.admin.LinkAgentWith(ctx, fresh.ID, api.LinkAgentRequest{Issuer: old.Issuer, Subject: old.Subject, Replace: true, By: "ops"})
	if err != nil || out.ID != fresh.ID || out.Replaced == nil || out.Replaced.ID != old.ID {
		t.Fatalf("replace: %+v %v", out, err)
	}
	followed(t, a, b, "the move")
	credsDropped(t, b, "the move")
	me, err := b.anon.WithToken(p.Token(t, "svc", "read", "post")).Whoami(ctx)
	if err != nil || me.ID != fresh.ID {
		t.Fatalf("the identity's token after the move: %+v %v, want agent %s", me, err, fresh.ID)
	}
	gone, err := b.admin.Agents(ctx, 0, "")
	if err != nil || gone.TotalSize != 2 || gone.Agents[0].DisabledAt == "" || gone.Agents[0].IdentityMoved == nil ||
		gone.Agents[0].IdentityMoved.To != fresh.ID {
		t.Fatalf("agents after the move: %+v %v", gone, err)
	}
}
