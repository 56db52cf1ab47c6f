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
	p.AddClient(oidctest.Client{ID: "kfa-web", Secret: "web-secret", RedirectURIs: []string{publicURL + "/login/callback"},
		PostLogoutRedirectURIs: []string{publicURL + "/"}})
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
// signs in as the linked agent; the provider's own refusal is shown.
func TestOAuthWebSignInRefused(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	p.AddClient(oidctest.Client{ID: "kfa-web", Secret: "web-secret", RedirectURIs: []string{publicURL + "/login/callback"}})
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

	res, raw := h.raw("GET", "/login/callback?error=access_denied&error_description=the+person+said+no", nil, "")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(raw), "The provider did not sign you in (access_denied): the person said no") {
		t.Fatalf("the provider's refusal: %d\n%s", res.StatusCode, raw)
	}
}
