package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/oidctest"
)

// TestOAuthWebSignIn: a person signs in to the web view through the
// provider in headless Chromium (authorization code with PKCE, state and
// nonce), lands back on the discussion they came from in a kfa session
// of their identity's agent, replies from the page (the reply completes
// the waiting task), and signs out: kfa's session ends, and the page
// links to the provider's RP-initiated logout, which brings them back.
func TestOAuthWebSignIn(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{Path: "/realms/kfa"})
	p.AddClient(webClient())
	p.AddPerson(oidctest.Person{Subject: "u-carol", Username: "carol", Name: "Carol C."})
	f := newWebFixture(t, func(c *serverConfig) {
		c.PublicURL, c.OAuthIssuers = publicURL, []string{p.Issuer}
		c.OAuthWebClientID, c.OAuthWebClientSecret = "kfa-web", "web-secret"
		c.AskRate = 0
	})
	h := f.h
	oauthReady(t, h)
	disc := "/discussions/" + f.open

	// The browser reaches kfa at its public URL (kfa.test, mapped to the
	// listener), since the provider sends it back there.
	tab := newTab(t, chromedp.Flag("host-resolver-rules", "MAP kfa.test "+h.srv.Addr()),
		chromedp.Flag("disable-features", "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable"))
	if st := open(t, tab, publicURL+"/login?next="+url.QueryEscape(disc)); st != 200 {
		t.Fatalf("the sign-in page: %d", st)
	}
	if got := text(t, tab, ".provider-signin"); got != "Sign in with "+p.Host() {
		t.Fatalf("the provider's link says %q", got)
	}
	checkContrast(t, tab, "login with a provider")
	if st := follow(t, tab, "go to the provider", chromedp.Click(chromedp.CSS(".provider-signin"))); st != 200 {
		t.Fatalf("the provider's login page: %d", st)
	}
	at := eval[string](t, tab, "location.href")
	if !strings.HasPrefix(at, "http://"+p.Host()+"/login?id=") {
		t.Fatalf("the browser is at %s, not the provider's login page", at)
	}
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("username"), "carol")), "type the username")
	if st := follow(t, tab, "sign in at the provider", chromedp.Click(chromedp.ID("signin"))); st != 200 {
		t.Fatalf("back from the provider: %d", st)
	}
	if loc := eval[string](t, tab, "location.href"); loc != publicURL+disc {
		t.Fatalf("after the sign-in the browser is at %s, want %s", loc, publicURL+disc)
	}
	if who := text(t, tab, ".signed-in strong"); who != "carol" {
		t.Fatalf("signed in as %q", who)
	}
	if c := eval[string](t, tab, "document.cookie"); c != "" {
		t.Fatalf("page script can read cookies %q", c)
	}
	agents, err := h.admin.Agents(bg(), 0, "")
	if err != nil || agents.TotalSize != 3 {
		t.Fatalf("agents after the sign-in: %+v %v", agents, err)
	}
	carol := agents.Agents[2]
	if carol.Name != "carol" || carol.Issuer != p.Issuer || carol.Subject != "u-carol" {
		t.Fatalf("the signed-in person's agent: %+v", carol)
	}

	// A reply from the page is carol's, and completes alice's task.
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("body"), "Only one process may open the file; set Options.Timeout.")), "type the reply")
	if st := follow(t, tab, "post the reply", chromedp.Click(chromedp.CSS("form.reply button"))); st != 200 {
		t.Fatalf("after the reply: %d", st)
	}
	d, err := h.anon.Discussion(bg(), f.open)
	if err != nil || len(d.Replies) != 1 || d.Replies[0].AuthorID != carol.ID || d.Status != "answered" {
		t.Fatalf("the discussion after carol's reply: %+v %v", d, err)
	}
	tk, err := h.anon.WithToken(f.alice.Token).GetTask(bg(), f.openTask, nil)
	if err != nil || tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("alice's task after the reply: %+v %v", tk, err)
	}

	// Sign out: kfa's session ends, and the page offers the provider's.
	if st := follow(t, tab, "sign out", chromedp.Click(chromedp.CSS(".who form button"))); st != 200 {
		t.Fatalf("after sign-out: %d", st)
	}
	if n := eval[int](t, tab, `document.querySelectorAll(".signed-in").length`); n != 0 {
		t.Fatal("still signed in after signing out")
	}
	href := eval[string](t, tab, `document.querySelector("#provider-logout").href`)
	u, _ := url.Parse(href)
	if !strings.HasPrefix(href, p.Issuer+"/") || u.Query().Get("client_id") != "kfa-web" || u.Query().Get("post_logout_redirect_uri") != publicURL+"/" {
		t.Fatalf("the provider's logout link: %s", href)
	}
	if st := follow(t, tab, "sign out at the provider", chromedp.Click(chromedp.ID("provider-logout"))); st != 200 {
		t.Fatalf("after the provider's logout: %d", st)
	}
	if loc := eval[string](t, tab, "location.href"); loc != publicURL+"/" {
		t.Fatalf("the provider's logout left the browser at %s", loc)
	}
	if res, _ := h.raw("GET", "/login/callback?state=x&code=y", nil, ""); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a callback of no sign-in: %d", res.StatusCode)
	}
}

// webClient is kfa's web view as registered at the provider: a web
// client that may have kfa's scopes, whose access tokens name kfa (as
// docs/oauth.md sets Keycloak up).
func webClient() oidctest.Client {
	return oidctest.Client{ID: "kfa-web", Secret: "web-secret", Scopes: []string{"read", "post"}, Audience: []string{publicURL},
		RedirectURIs: []string{publicURL + "/login/callback"}, PostLogoutRedirectURIs: []string{publicURL + "/"}}
}

// providerBrowser is a cookie-keeping HTTP client that reaches kfa at its
// public URL (kfa.test, dialled to the listener) and the provider where it
// is, and stops at kfa's answers to show them.
func providerBrowser(t *testing.T, h *harness) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == "kfa.test:80" {
			addr = h.srv.Addr()
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Jar: jar, Transport: tr, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Host == "kfa.test" && r.URL.Path != "/login/callback" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// signInThrough runs a sign-in at the provider as username and returns
// kfa's last answer (the callback's, or the page it leads to).
func signInThrough(t *testing.T, c *http.Client, p *oidctest.Provider, username string) (*http.Response, string) {
	t.Helper()
	res, err := c.Get(publicURL + "/login/provider?" + url.Values{"issuer": {p.Issuer}, "next": {"/discussions"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	login := res.Request.URL
	if login.Host != p.Host() || login.Path != "/login" {
		t.Fatalf("the sign-in went to %s (%s), not the provider's login page", login, res.Status)
	}
	res, err = c.PostForm("http://"+p.Host()+"/login", url.Values{"id": {login.Query().Get("id")}, "username": {username}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestOAuthWebSignInRefused: a sign-in through the provider is refused,
// saying why, for an identity no agent is linked to (auto-provisioning
// off) and for one whose agent was revoked; a person the operator linked
// signs in as the linked agent; the provider's own refusal is shown in
// kfa's words (TestOAuthWebCallbackError has every code).
func TestOAuthWebSignInRefused(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	p.AddClient(webClient())
	p.AddPerson(oidctest.Person{Subject: "u-dave", Username: "dave"})
	p.AddPerson(oidctest.Person{Subject: "u-erin", Username: "erin"})
	h := startOAuth(t, p, func(c *serverConfig) {
		c.OAuthWebClientID, c.OAuthWebClientSecret, c.OAuthAutoProvision = "kfa-web", "web-secret", false
	})
	before := h.digest()
	res, body := signInThrough(t, providerBrowser(t, h), p, "dave")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "kfa agent link AGENT_ID --issuer "+p.Issuer+" --subject u-dave") {
		t.Fatalf("an unlinked person: %d\n%s", res.StatusCode, body)
	}
	if h.digest() != before {
		t.Fatal("a refused sign-in changed the store")
	}

	erin, _ := h.agent("erin-agent")
	if _, err := h.admin.LinkAgent(bg(), erin.ID, p.Issuer, "u-erin"); err != nil {
		t.Fatal(err)
	}
	c := providerBrowser(t, h)
	res, _ = signInThrough(t, c, p, "erin")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/discussions" {
		t.Fatalf("a linked person: %d %v", res.StatusCode, res.Header)
	}
	page, err := c.Get(publicURL + "/discussions")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(b), "<strong>erin-agent</strong>") {
		t.Fatalf("the linked person is not signed in as the linked agent:\n%s", b)
	}

	if _, err := h.admin.RevokeAgent(bg(), erin.ID); err != nil {
		t.Fatal(err)
	}
	res, body = signInThrough(t, providerBrowser(t, h), p, "erin")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "was revoked") {
		t.Fatalf("a revoked person: %d\n%s", res.StatusCode, body)
	}

	c = providerBrowser(t, h)
	_, state := beginSignIn(t, c, p)
	res, err = c.Get(publicURL + "/login/callback?" + url.Values{"error": {"access_denied"}, "error_description": {"the person said no"},
		"state": {state}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(raw), "The provider did not sign you in: the sign-in was refused") ||
		strings.Contains(string(raw), "the person said no") {
		t.Fatalf("the provider's refusal: %d\n%s", res.StatusCode, raw)
	}
}

// TestOAuthWebCallbackError: the provider's error on the callback of a
// sign-in under way ends it with a fixed message for its code, showing
// nothing the caller wrote (not the description, not an unknown code);
// a callback whose state is not the sign-in's (an error or a code, from
// a link someone else crafted) is refused and leaves the sign-in under
// way alone, cookie and all, and the person finishes it.
func TestOAuthWebCallbackError(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	p.AddClient(webClient())
	p.AddPerson(oidctest.Person{Subject: "u-fay", Username: "fay"})
	h := startOAuth(t, p, func(c *serverConfig) { c.OAuthWebClientID, c.OAuthWebClientSecret = "kfa-web", "web-secret" })
	hostile := `<b id=x>Your account is locked: call +1 555 0100</b>`
	callback := func(c *http.Client, q url.Values) (*http.Response, string) {
		t.Helper()
		res, err := c.Get(publicURL + "/login/callback?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	flowCookie := func(res *http.Response) *http.Cookie {
		for _, ck := range res.Cookies() {
			if ck.Name == "kfa_oauth" {
				return ck
			}
		}
		return nil
	}
	for _, tc := range []struct{ code, says string }{
		{"access_denied", "The provider did not sign you in: the sign-in was refused or cancelled there."},
		{"login_required", "The provider wants you to sign in, or to agree, there first. Start again."},
		{"server_error", "The provider could not sign you in just now. Try again later."},
		{"invalid_scope", "The provider refused the sign-in request kfa sent"},
		{"made_up<i>", "The provider did not sign you in."},
	} {
		c := providerBrowser(t, h)
		_, state := beginSignIn(t, c, p)
		res, body := callback(c, url.Values{"error": {tc.code}, "error_description": {hostile}, "error_uri": {"https://evil.example/help"},
			"state": {state}})
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, tc.says) {
			t.Fatalf("%s: %d\n%s", tc.code, res.StatusCode, body)
		}
		for _, leak := range []string{"locked", "555", "evil.example", "made_up", "&lt;b", tc.code} {
			if strings.Contains(body, leak) {
				t.Fatalf("%s: the page shows the caller's %q:\n%s", tc.code, leak, body)
			}
		}
		if ck := flowCookie(res); ck == nil || ck.MaxAge >= 0 {
			t.Fatalf("%s: the provider's answer did not end the sign-in: %v", tc.code, ck)
		}
	}

	// A callback of another state, or of none, does not touch the sign-in
	// under way, whatever it carries.
	c := providerBrowser(t, h)
	login, _ := beginSignIn(t, c, p)
	for _, q := range []url.Values{
		{"error": {"access_denied"}, "error_description": {hostile}, "state": {"not-yours"}},
		{"error": {"access_denied"}},
		{"code": {"x"}, "state": {"not-yours"}},
	} {
		res, body := callback(c, q)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "This sign-in was not started in this browser") ||
			strings.Contains(body, "locked") {
			t.Fatalf("%s: %d\n%s", q.Encode(), res.StatusCode, body)
		}
		if ck := flowCookie(res); ck != nil {
			t.Fatalf("%s: the callback touched the sign-in under way: %v", q.Encode(), ck)
		}
	}
	res, err := c.PostForm("http://"+p.Host()+"/login", url.Values{"id": {login.Query().Get("id")}, "username": {"fay"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/discussions" {
		t.Fatalf("the sign-in under way did not finish: %d %v", res.StatusCode, res.Header)
	}
}

// beginSignIn starts a sign-in at the provider in browser c, returning
// to /discussions: the provider's login page it lands on, and the state
// kfa sent the provider.
func beginSignIn(t *testing.T, c *http.Client, p *oidctest.Provider) (login *url.URL, state string) {
	t.Helper()
	res, err := c.Get(publicURL + "/login/provider?" + url.Values{"issuer": {p.Issuer}, "next": {"/discussions"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	login = res.Request.URL
	for r := res.Request; r != nil; r = r.Response.Request {
		if st := r.URL.Query().Get("state"); st != "" {
			state = st
		}
		if r.Response == nil {
			break
		}
	}
	if login.Host != p.Host() || state == "" {
		t.Fatalf("the sign-in went to %s (state %q)", login, state)
	}
	return login, state
}

// TestOAuthWebSignInScopes: a session through the provider does what the
// provider granted the sign-in (the scopes of the access token it
// returned), not what its agent could: a read-only person is offered no
// reply form and cannot reply, a person granted post replies, a person
// granted nothing is not signed in. A grant changed at the provider
// counts from the next sign-in. A provider named in
// --oauth-web-agent-scopes (one that cannot grant kfa's scopes) is asked
// for none, and its sessions hold their agents' scopes.
func TestOAuthWebSignInScopes(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	p.AddClient(webClient())
	p.AddPerson(oidctest.Person{Subject: "u-rita", Username: "rita", Scopes: []string{"read"}})
	p.AddPerson(oidctest.Person{Subject: "u-pete", Username: "pete", Scopes: []string{"read", "post"}})
	p.AddPerson(oidctest.Person{Subject: "u-nora", Username: "nora", Scopes: []string{}})
	web := func(c *serverConfig) {
		c.PublicURL, c.OAuthIssuers = publicURL, []string{p.Issuer}
		c.OAuthWebClientID, c.OAuthWebClientSecret = "kfa-web", "web-secret"
		c.AskRate, c.ReplyRate = 0, 0
	}
	f := newWebFixture(t, web)
	h := f.h
	oauthReady(t, h)
	disc := "/discussions/" + f.open
	get := func(c *http.Client, path string) string {
		t.Helper()
		res, err := c.Get(publicURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	reply := func(c *http.Client, body string) (*http.Response, string) {
		t.Helper()
		csrf := csrfField.FindStringSubmatch(get(c, disc))
		if csrf == nil {
			t.Fatal("no form token on the page")
		}
		res, err := c.PostForm(publicURL+disc+"/replies", url.Values{"csrf": {csrf[1]}, "body": {body}})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	signIn := func(name string) *http.Client {
		t.Helper()
		c := providerBrowser(t, h)
		if res, body := signInThrough(t, c, p, name); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s signs in: %d\n%s", name, res.StatusCode, body)
		}
		return c
	}

	rita := signIn("rita")
	if page := get(rita, disc); !strings.Contains(page, "<strong>rita</strong>") || strings.Contains(page, `class="reply"`) {
		t.Fatalf("a read-only person's page:\n%s", page)
	}
	before := h.digest()
	if res, body := reply(rita, "A read-only person's reply."); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "post scope") {
		t.Fatalf("a read-only person replies: %d\n%s", res.StatusCode, body)
	}
	if h.digest() != before {
		t.Fatal("a refused reply changed the store")
	}
	list, err := h.admin.Agents(bg(), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	ritaAgent := list.Agents[len(list.Agents)-1]
	if ritaAgent.Name != "rita" || strings.Join(ritaAgent.Scopes, ",") != "read,post" {
		t.Fatalf("rita's agent: %+v", ritaAgent)
	}

	pete := signIn("pete")
	if page := get(pete, disc); !strings.Contains(page, `class="reply"`) {
		t.Fatalf("a person granted post is offered no reply form:\n%s", page)
	}
	if res, body := reply(pete, "Set Options.Timeout; only one process may hold the lock."); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a person granted post replies: %d\n%s", res.StatusCode, body)
	}

	res, body := signInThrough(t, providerBrowser(t, h), p, "nora")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "is granted neither the read nor the post scope on this server") {
		t.Fatalf("a person granted nothing: %d\n%s", res.StatusCode, body)
	}

	// Rita is granted post at the provider: her session keeps what it was
	// granted; her next sign-in has post.
	p.AddPerson(oidctest.Person{Subject: "u-rita", Username: "rita", Scopes: []string{"read", "post"}})
	if res, _ := reply(rita, "Still read-only."); res.StatusCode != http.StatusForbidden {
		t.Fatalf("rita's session changed with the grant: %d", res.StatusCode)
	}
	if res, body := reply(signIn("rita"), "Granted post since."); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("rita after a new sign-in: %d\n%s", res.StatusCode, body)
	}

	// A provider that grants nothing of kfa's, named so: its sessions do
	// what their agents may.
	h2 := start(t, func(c *serverConfig) { web(c); c.OAuthWebAgentScopes = []string{p.Issuer} })
	oauthReady(t, h2)
	c := providerBrowser(t, h2)
	if res, body := signInThrough(t, c, p, "nora"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("nora where sessions hold their agents' scopes: %d\n%s", res.StatusCode, body)
	}
	if page := get(c, "/"); !strings.Contains(page, "<strong>nora</strong>") {
		t.Fatalf("nora is not signed in:\n%s", page)
	}
}
