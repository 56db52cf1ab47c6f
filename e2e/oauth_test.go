package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/oidctest"
	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/server"
)

// The OAuth resource server end to end (issue 26): a real OpenID provider
// (internal/oidctest: zitadel's OP on loopback) issues the tokens, and kfa
// serve checks them, on bbolt or PostgreSQL (KFA_E2E_STORE).

const publicURL = "http://kfa.test"

// oauthProvider runs a provider with the clients the tests use: svc (read
// and post, audience kfa, named build-bot), reader (read only, audience
// kfa's MCP endpoint), elsewhere (another audience), stale (tokens that
// expired five minutes ago), bare (no scope of kfa's).
func oauthProvider(t *testing.T, opts oidctest.Options) *oidctest.Provider {
	t.Helper()
	p := oidctest.Start(t, opts)
	for _, c := range []oidctest.Client{
		{ID: "svc", Secret: "svc-secret", Scopes: []string{"read", "post"}, Audience: []string{publicURL}, Username: "build-bot"},
		{ID: "reader", Secret: "reader-secret", Scopes: []string{"read"}, Audience: []string{publicURL + "/mcp"}},
		{ID: "elsewhere", Secret: "elsewhere-secret", Scopes: []string{"read", "post"}, Audience: []string{"https://other.example.com"}},
		{ID: "stale", Secret: "stale-secret", Scopes: []string{"read", "post"}, Audience: []string{publicURL}, Lifetime: -5 * time.Minute},
		{ID: "bare", Secret: "bare-secret", Audience: []string{publicURL}},
	} {
		p.AddClient(c)
	}
	return p
}

// startOAuth runs a server that accepts p's tokens and waits until it has
// read p's metadata and keys.
func startOAuth(t *testing.T, p *oidctest.Provider, mutate func(*server.Config)) *harness {
	t.Helper()
	h := start(t, func(c *server.Config) {
		c.PublicURL = publicURL
		c.OAuthIssuers = []string{p.Issuer}
		c.AskRate = 0
		if mutate != nil {
			mutate(c)
		}
	})
	oauthReady(t, h)
	return h
}

// oauthReady waits until h has reached every issuer and shows it.
func oauthReady(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a measure
	defer cancel()
	if err := h.srv.OAuthReady(ctx); err != nil {
		t.Fatalf("the server did not reach its OAuth issuers: %v", err)
	}
}

// challenge is the WWW-Authenticate of a response.
func challenge(res *http.Response) string { return res.Header.Get("WWW-Authenticate") }

const resourceMetadata = `resource_metadata="` + publicURL + `/.well-known/oauth-protected-resource"`

// TestOAuthOff: without --oauth-issuer nothing of OAuth appears: no
// metadata route, no resource_metadata in challenges, no oauth2 scheme,
// nothing in /a2a/info.
func TestOAuthOff(t *testing.T) {
	h := start(t, nil)
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		if res, _ := h.raw("GET", path, nil, ""); res.StatusCode != http.StatusNotFound {
			t.Fatalf("%s without an issuer: %d", path, res.StatusCode)
		}
	}
	res, _ := h.raw("GET", "/a2a/v1/tasks", a2aHeaders(""), "")
	if res.StatusCode != http.StatusUnauthorized || challenge(res) != `Bearer realm="kfa"` {
		t.Fatalf("the challenge without an issuer: %d %q", res.StatusCode, challenge(res))
	}
	_, card := h.raw("GET", "/.well-known/agent-card.json", nil, "")
	_, info := h.raw("GET", "/a2a/info", nil, "")
	for name, doc := range map[string][]byte{"card": card, "info": info} {
		if strings.Contains(strings.ToLower(string(doc)), "oauth") {
			t.Fatalf("the %s mentions OAuth without an issuer:\n%s", name, doc)
		}
	}
	// A JWT-shaped bearer is an invalid token, as any other garbage.
	p := oauthProvider(t, oidctest.Options{})
	tok := p.Token(t, "svc", "read", "post")
	res, body := h.raw("GET", "/a2a/v1/tasks", a2aHeaders(tok), "")
	if res.StatusCode != http.StatusUnauthorized || strings.Contains(challenge(res), "resource_metadata") {
		t.Fatalf("a provider's token without an issuer: %d %q %s", res.StatusCode, challenge(res), body)
	}
}

// TestOAuthClientCredentials: an agent with a client credentials token
// searches, asks, gets, lists and cancels; two tokens of one client are
// one agent, named from the token, listed with its identity; a read-only
// token cannot ask (403 naming the scope); the discovery documents point
// at the provider.
func TestOAuthClientCredentials(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	ctx := context.Background()
	first := h.anon.WithToken(p.Token(t, "svc", "read", "post"))
	second := h.anon.WithToken(p.Token(t, "svc", "read", "post"))

	found, err := first.SendMessage(ctx, a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "s-1", Role: a2a.RoleUser,
		Parts: []a2a.Part{a2a.TextPart("bbolt")}}})
	if err != nil || found.Message == nil {
		t.Fatalf("search with a token: %+v %v", found, err)
	}
	tk := h.ask(first, "o-1", "How do I rotate a provider's signing key without a restart?")
	other := h.ask(second, "o-2", "A second question by the same client")
	got, err := second.GetTask(ctx, tk.ID, nil)
	if err != nil || got.ID != tk.ID {
		t.Fatalf("the first token's task with the second token: %+v %v", got, err)
	}
	list, err := first.ListTasks(ctx, nil)
	if err != nil || len(list.Tasks) != 2 || list.TotalSize != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	canceled, err := first.CancelTask(ctx, other.ID)
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %+v %v", canceled, err)
	}
	a, err := first.Whoami(ctx)
	b, err2 := second.Whoami(ctx)
	if err != nil || err2 != nil || a.ID != b.ID || a.Name != "build-bot" || strings.Join(a.Scopes, ",") != "read,post" {
		t.Fatalf("whoami: %+v %v, %+v %v", a, err, b, err2)
	}
	agents, err := h.admin.Agents(ctx, 0, "")
	if err != nil || agents.TotalSize != 1 || agents.Agents[0].Issuer != p.Issuer || agents.Agents[0].Subject != "svc" {
		t.Fatalf("agents: %+v %v", agents, err)
	}

	// Read only: reads, never asks.
	reader := h.anon.WithToken(p.Token(t, "reader", "read", "post"))
	if me, err := reader.Whoami(ctx); err != nil || strings.Join(me.Scopes, ",") != "read" || me.ID == a.ID {
		t.Fatalf("the reader: %+v %v", me, err)
	}
	res, body := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(reader.Token()), mustJSON(askReq("r-1", "Can I ask?", nil)))
	want := `Bearer realm="kfa", error="insufficient_scope", scope="post", ` + resourceMetadata
	if res.StatusCode != http.StatusForbidden || challenge(res) != want || !strings.Contains(string(body), "post") {
		t.Fatalf("a read-only token asks: %d %q %s", res.StatusCode, challenge(res), body)
	}

	// Discovery.
	for _, tc := range []struct{ path, resource string }{
		{"/.well-known/oauth-protected-resource", publicURL},
		{"/.well-known/oauth-protected-resource/mcp", publicURL + "/mcp"},
	} {
		res, body := h.raw("GET", tc.path, nil, "")
		var m struct {
			Resource      string   `json:"resource"`
			Servers       []string `json:"authorization_servers"`
			Scopes        []string `json:"scopes_supported"`
			BearerMethods []string `json:"bearer_methods_supported"`
		}
		if res.StatusCode != http.StatusOK || json.Unmarshal(body, &m) != nil || m.Resource != tc.resource ||
			strings.Join(m.Servers, ",") != p.Issuer || strings.Join(m.Scopes, ",") != "read,post" || strings.Join(m.BearerMethods, ",") != "header" {
			t.Fatalf("%s: %d %s", tc.path, res.StatusCode, body)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: content type %q, CORS %q", tc.path, ct, res.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	card, _, err := h.anon.Card(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cc := card.SecuritySchemes["oauth2"].OAuth2
	code := card.SecuritySchemes["oauth2AuthCode"].OAuth2
	if cc == nil || cc.Flows.ClientCredentials == nil || cc.Flows.ClientCredentials.TokenURL != p.TokenURL() || code == nil ||
		code.Flows.AuthorizationCode == nil || !code.Flows.AuthorizationCode.PKCERequired || cc.OAuth2MetadataURL == "" {
		t.Fatalf("the card's oauth2 schemes: %+v", card.SecuritySchemes)
	}
	info, err := h.anon.Info(ctx)
	if err != nil || info.OAuth == nil || strings.Join(info.OAuth.Issuers, ",") != p.Issuer ||
		info.OAuth.ResourceMetadata != publicURL+"/.well-known/oauth-protected-resource" {
		t.Fatalf("info: %+v %v", info.OAuth, err)
	}
	_, llms := h.raw("GET", "/llms.txt", nil, "")
	if !strings.Contains(string(llms), "OAuth 2.1 access tokens (JWT) of\n"+p.Issuer) {
		t.Fatalf("llms.txt does not say so:\n%s", llms)
	}
}

// TestOAuthRefusals: every token kfa must refuse gets 401 (403 for a
// missing scope), with a reason the caller can act on and a challenge
// that points at the resource metadata; a refusal stores nothing.
func TestOAuthRefusals(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	stranger := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	good := p.Token(t, "svc", "read", "post")
	before := h.digest()
	for _, tc := range []struct {
		name   string
		token  string
		status int
		reason string
	}{
		{"expired", p.Token(t, "stale", "read"), 401, "the token expired at"},
		{"wrong audience", p.Token(t, "elsewhere", "read"), 401, `the token's audience (aud ["https://other.example.com"]) is not this server`},
		{"wrong issuer", stranger.Token(t, "svc", "read"), 401, "is not configured on this server"},
		{"alg none", p.Forge(t, good, "none", nil), 401, `the token is not signed (alg "none")`},
		{"HS256 signed with the public key", p.Forge(t, good, "HS256", nil), 401, `signed with a shared secret (alg "HS256")`},
		{"no scope of kfa's", p.Token(t, "bare", "openid"), 403, ""},
		{"an opaque token", "ya29.a0AfH6SMBx-opaque_token", 401, `kfa needs a JWT access token whose audience is "` + publicURL + `" or "` +
			publicURL + `/mcp"; this one is not a JWT`},
		{"an opaque token: how to get a JWT", "2YotnFZFEjr1zCsicMWpAA", 401, "with resource=" + publicURL + " in the token request (RFC 8707)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(tc.token), mustJSON(askReq("x-"+tc.name, "refused?", nil)))
			c := challenge(res)
			if res.StatusCode != tc.status || !strings.HasSuffix(c, ", "+resourceMetadata) {
				t.Fatalf("%d %q %s", res.StatusCode, c, body)
			}
			// The challenge's quoted-string holds no quote: the reason's
			// quotes are apostrophes there; the JSON body escapes them.
			if tc.status == 401 && (!strings.HasPrefix(c, `Bearer realm="kfa", error="invalid_token", error_description="`) ||
				!strings.Contains(c, strings.ReplaceAll(tc.reason, `"`, "'")) ||
				!strings.Contains(string(body), strings.ReplaceAll(tc.reason, `"`, `\"`))) {
				t.Fatalf("the refusal does not say %q:\n%s\n%s", tc.reason, c, body)
			}
			if tc.status == 403 && !strings.Contains(c, `error="insufficient_scope", scope="read"`) {
				t.Fatalf("the scope refusal: %s", c)
			}
		})
	}
	if h.digest() != before {
		t.Fatal("refused tokens changed the store")
	}

	// No credential at all: the challenge has no error, and points at the
	// metadata all the same (RFC 6750 §3.1, RFC 9728 §5.1).
	res, _ := h.raw("GET", "/a2a/v1/tasks", a2aHeaders(""), "")
	if c := challenge(res); res.StatusCode != 401 || c != `Bearer realm="kfa", `+resourceMetadata {
		t.Fatalf("no credential: %d %q", res.StatusCode, c)
	}
	// A kfa token still works, and a bad one is still refused as before.
	_, alice := h.agent("alice")
	if _, err := alice.Whoami(context.Background()); err != nil {
		t.Fatalf("a kfa token beside OAuth: %v", err)
	}
	res, _ = h.raw("GET", "/a2a/v1/tasks", a2aHeaders("kfa_nope"), "")
	if c := challenge(res); res.StatusCode != 401 || !strings.Contains(c, `error="invalid_token"`) || !strings.HasSuffix(c, resourceMetadata) {
		t.Fatalf("a bad kfa token: %d %q", res.StatusCode, c)
	}
}

// TestOAuthKeyRotation: after the provider rotates its key, a token with
// the new key id is accepted once kfa has fetched the keys again (once).
func TestOAuthKeyRotation(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	ctx := context.Background()
	if _, err := h.anon.WithToken(p.Token(t, "svc", "read")).Whoami(ctx); err != nil {
		t.Fatal(err)
	}
	fetches := p.JWKSFetches()
	p.RotateKey(t)
	if _, err := h.anon.WithToken(p.Token(t, "svc", "read")).Whoami(ctx); err != nil {
		t.Fatalf("a token of the rotated key: %v", err)
	}
	if n := p.JWKSFetches() - fetches; n != 1 {
		t.Fatalf("the rotation cost %d fetches of the key set, want 1", n)
	}
}

// TestOAuthProviderDown: while the provider is unreachable after start,
// tokens signed with keys kfa holds keep working, and a token with a new
// key id is refused, saying the keys could not be fetched.
func TestOAuthProviderDown(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	ctx := context.Background()
	old := h.anon.WithToken(p.Token(t, "svc", "read", "post"))
	p.RotateKey(t)
	fresh := p.Token(t, "svc", "read", "post")
	p.SetReachable(false)
	if _, err := old.Whoami(ctx); err != nil {
		t.Fatalf("a token of a cached key with the provider down: %v", err)
	}
	h.ask(old, "down-1", "Does kfa work while the provider is down?")
	res, body := h.raw("GET", "/api/v1/whoami", map[string]string{"Authorization": "Bearer " + fresh}, "")
	if res.StatusCode != 401 || !strings.Contains(string(body), "and fetching them again failed") {
		t.Fatalf("a new key with the provider down: %d %s", res.StatusCode, body)
	}
}

// TestOAuthUnreachableAtStart: a server whose issuer does not answer
// starts, says so in its log, serves kfa tokens, refuses the issuer's
// tokens saying why, and accepts them once the issuer answers.
func TestOAuthUnreachableAtStart(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	tok := p.Token(t, "svc", "read")
	p.SetReachable(false)
	h := start(t, func(c *server.Config) { c.PublicURL, c.OAuthIssuers = publicURL, []string{p.Issuer} })
	ctx := context.Background()
	_, alice := h.agent("alice")
	if _, err := alice.Whoami(ctx); err != nil {
		t.Fatalf("a kfa token while the issuer is down: %v", err)
	}
	res, body := h.raw("GET", "/api/v1/whoami", map[string]string{"Authorization": "Bearer " + tok}, "")
	if res.StatusCode != 401 || !strings.Contains(string(body), "kfa has not reached issuer "+p.Issuer+" yet") {
		t.Fatalf("the issuer's token before it answers: %d %s", res.StatusCode, body)
	}
	waitFor(t, "the log to say the issuer cannot be used", func() bool {
		return strings.Contains(h.logBuf.String(), `msg="oauth: cannot use issuer; kfa tokens keep working`)
	})
	p.SetReachable(true)
	oauthReady(t, h)
	if me, err := h.anon.WithToken(tok).Whoami(ctx); err != nil || me.Name != "build-bot" {
		t.Fatalf("the issuer's token once it answers: %+v %v", me, err)
	}
}

// TestOAuthLinkedOnly: with --oauth-auto-provision=false a new identity is
// refused, saying how to link it; once linked, its tokens are the linked
// agent.
func TestOAuthLinkedOnly(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, func(c *server.Config) { c.OAuthAutoProvision = false })
	ctx := context.Background()
	tok := p.Token(t, "svc", "read", "post")
	res, body := h.raw("GET", "/api/v1/whoami", map[string]string{"Authorization": "Bearer " + tok}, "")
	if res.StatusCode != 401 || !strings.Contains(string(body), "kfa agent link") || !strings.Contains(string(body), `\"svc\"`) {
		t.Fatalf("an unlinked identity: %d %s", res.StatusCode, body)
	}
	ci, _ := h.agent("ci-bot")
	if _, err := h.admin.LinkAgent(ctx, ci.ID, p.Issuer, "svc"); err != nil {
		t.Fatal(err)
	}
	me, err := h.anon.WithToken(tok).Whoami(ctx)
	if err != nil || me.ID != ci.ID || me.Name != "ci-bot" {
		t.Fatalf("the linked identity: %+v %v", me, err)
	}
	if n, err := h.admin.Agents(ctx, 0, ""); err != nil || n.TotalSize != 1 {
		t.Fatalf("agents: %+v (%v)", n, err)
	}
}

// TestOAuthMCP: whoami over /mcp names a token's agent; without a token
// it points at the MCP endpoint's resource metadata, and a bad token is a
// 401 whose challenge does.
func TestOAuthMCP(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, nil)
	cs := mcpSession(t, h, p.Token(t, "reader", "read"))
	var who mcpserver.WhoamiOutput
	mcpOut(t, mcpCall(t, cs, mcpserver.ToolWhoami, map[string]any{}), &who)
	if !who.Authenticated || who.Name != "reader" || strings.Join(who.Scopes, ",") != "read" {
		t.Fatalf("whoami: %+v", who)
	}
	// Anonymous: whoami points at the metadata, to find the provider.
	var anon mcpserver.WhoamiOutput
	mcpOut(t, mcpCall(t, mcpSession(t, h, ""), mcpserver.ToolWhoami, map[string]any{}), &anon)
	if anon.Authenticated || anon.ResourceMetadata != publicURL+"/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("anonymous whoami: %+v", anon)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	for _, tok := range []string{p.Token(t, "stale", "read"), "kfa_nope"} {
		res, out := h.mcpPost(body, "Authorization", "Bearer "+tok, "MCP-Protocol-Version", "2025-06-18")
		want := `resource_metadata="` + publicURL + `/.well-known/oauth-protected-resource/mcp"`
		if res.StatusCode != http.StatusUnauthorized || !strings.HasSuffix(challenge(res), want) {
			t.Fatalf("whoami with a bad token: %d %q %s", res.StatusCode, challenge(res), out)
		}
	}
}

// TestOAuthAccessTokenType: kfa serve takes only access tokens typed
// at+jwt (RFC 9068 §4): a person's real ID token, whose audience is
// kfa's (the operator gave the web client's id to --oauth-audience) and
// whose roles are kfa's scopes, is refused, and so are the tokens of a
// provider that types its access tokens JWT (as Entra ID does), until
// the operator names that provider with --oauth-plain-jwt-issuer.
func TestOAuthAccessTokenType(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	p.AddClient(oidctest.Client{ID: "kfa-web", Secret: "web-secret", RedirectURIs: []string{publicURL + "/login/callback"}})
	p.AddPerson(oidctest.Person{Subject: "u-pat", Username: "pat", Claims: map[string]any{"roles": []string{"read", "post"}}})
	plain := oauthProvider(t, oidctest.Options{PlainJWT: true})
	ask := func(h *harness, token string) (*http.Response, []byte) {
		return h.raw("POST", "/a2a/v1/message:send", a2aHeaders(token), mustJSON(askReq("m-"+token[len(token)-8:], "typed?", nil)))
	}
	h := startOAuth(t, p, func(c *server.Config) {
		c.OAuthIssuers = []string{p.Issuer, plain.Issuer}
		c.OAuthAudiences = []string{publicURL, "kfa-web"}
	})
	before := h.digest()
	idToken := p.SignIn(t, "kfa-web", "pat").IDToken
	plainToken := plain.Token(t, "svc", "read", "post")
	for _, tc := range []struct {
		name, token, reason string
	}{
		{"an ID token", idToken, `the token is typed "JWT", not as an access token (at+jwt, RFC 9068)`},
		{"a provider's plain JWT", plainToken, "start kfa with --oauth-plain-jwt-issuer " + plain.Issuer},
		{"typed as an ID token", p.Retype(t, p.Token(t, "svc", "read"), "id_token+jwt"), `typed "id_token+jwt"`},
	} {
		res, body := ask(h, tc.token)
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), strings.ReplaceAll(tc.reason, `"`, `\"`)) {
			t.Fatalf("%s: %d %s", tc.name, res.StatusCode, body)
		}
	}
	if h.digest() != before {
		t.Fatal("refused tokens changed the store")
	}
	if res, body := ask(h, p.Token(t, "svc", "read", "post")); res.StatusCode != http.StatusOK {
		t.Fatalf("an at+jwt access token: %d %s", res.StatusCode, body)
	}

	// Named with --oauth-plain-jwt-issuer, the provider's JWTs work; the
	// other provider's ID tokens are still refused.
	h2 := startOAuth(t, p, func(c *server.Config) {
		c.OAuthIssuers = []string{p.Issuer, plain.Issuer}
		c.OAuthAudiences = []string{publicURL, "kfa-web"}
		c.OAuthPlainJWTIssuers = []string{plain.Issuer}
	})
	if res, body := ask(h2, plainToken); res.StatusCode != http.StatusOK {
		t.Fatalf("a plain JWT of a --oauth-plain-jwt-issuer: %d %s", res.StatusCode, body)
	}
	if res, _ := ask(h2, idToken); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an ID token of another issuer: %d", res.StatusCode)
	}
}
