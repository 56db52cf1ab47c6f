package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/oidctest"
	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/server"
)

// TestMCPStdioOAuth: kfa mcp takes a provider's access token in KFA_TOKEN
// as /mcp does: while kfa serve runs with --oauth-issuer, whoami names the
// token's agent; an expired token is refused, saying so.
func TestMCPStdioOAuth(t *testing.T) {
	t.Parallel()
	bin := buildKFA(t)
	p := oidctest.Start(t, oidctest.Options{})
	p.AddClient(oidctest.Client{ID: "svc", Secret: "s", Scopes: []string{"read", "post"}, Audience: []string{"http://kfa.test"}, Username: "build-bot"})
	p.AddClient(oidctest.Client{ID: "stale", Secret: "s", Scopes: []string{"read"}, Audience: []string{"http://kfa.test"}, Lifetime: -5 * time.Minute})
	dir := filepath.Join(shortTempDir(t), "data")
	l := startServer(t, dir, func(c *server.Config) { c.OAuthIssuers = []string{p.Issuer} })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a measure
	defer cancel()
	if err := l.srv.OAuthReady(ctx); err != nil {
		t.Fatal(err)
	}
	cs := stdioSession(t, bin, dir, p.Token(t, "svc", "read"))
	if out := stdioOut[mcpserver.WhoamiOutput](t, cs, mcpserver.ToolWhoami, nil); !out.Authenticated || out.Name != "build-bot" ||
		strings.Join(out.Scopes, ",") != "read" {
		t.Fatalf("whoami with an access token: %+v", out)
	}
	cs = stdioSession(t, bin, dir, p.Token(t, "stale", "read"))
	res := stdioCall(t, cs, mcpserver.ToolWhoami, nil)
	if !res.IsError || !strings.Contains(text(res), "invalid, expired or revoked") {
		t.Fatalf("whoami with an expired access token: %s", text(res))
	}
}
