package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// TestWebSignInAndReply: a person signs in with an agent token, replies
// through the form, and the reply is the API's: it completes the waiting
// task and answers the discussion. Forms without their CSRF token, or with
// another session's, are refused and leave the store as it was.
func TestWebSignInAndReply(t *testing.T) {
	f := newWebFixture(t, nil)
	h := f.h
	disc := "/discussions/" + f.open

	b := h.browser()
	login := b.get("/login?next=" + url.QueryEscape(disc))
	if b.cookie("kfa_signin") == "" || login.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("the sign-in form sets no form cookie, or is cacheable: %v", login.header)
	}
	login.mustContain(t, `name="next" value="`+disc+`"`)
	for _, tc := range []struct {
		name   string
		form   url.Values
		status int
		says   string
	}{
		{"no form token", url.Values{"token": {f.bob.Token}}, 403, "expired"},
		{"wrong form token", url.Values{"token": {f.bob.Token}, "csrf": {"x" + login.csrf(t)}}, 403, "expired"},
		{"bad token", url.Values{"token": {"kfa_nope"}, "csrf": {login.csrf(t)}}, 401, "does not sign in"},
		{"no token", url.Values{"csrf": {login.csrf(t)}}, 401, "does not sign in"},
	} {
		before := h.digest()
		p := b.post("/login", tc.form)
		if p.status != tc.status || p.signedInAs() != "" || !strings.Contains(p.body, tc.says) || b.cookie("kfa_session") != "" {
			t.Fatalf("%s: %d signed in as %q:\n%s", tc.name, p.status, p.signedInAs(), p.body)
		}
		if h.digest() != before {
			t.Fatalf("%s changed the store", tc.name)
		}
	}
	// A form that is not a URL-encoded form is refused too.
	if p := b.post("/login", nil, "Content-Type", "application/json"); p.status != http.StatusUnsupportedMediaType {
		t.Fatalf("JSON to /login: %d", p.status)
	}

	p := b.post("/login", url.Values{"csrf": {login.csrf(t)}, "token": {f.bob.Token}, "next": {disc}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != disc {
		t.Fatalf("sign in: %d %v\n%s", p.status, p.header, p.body)
	}
	setCookie := strings.Join(p.header.Values("Set-Cookie"), "\n")
	if !regexp.MustCompile(`kfa_session=[A-Za-z0-9_-]{43}; Path=/; Max-Age=2592000; HttpOnly; SameSite=Lax`).MatchString(setCookie) ||
		strings.Contains(setCookie, "Secure") || strings.Contains(setCookie, f.bob.Token) {
		t.Fatalf("session cookie: %s", setCookie)
	}

	page := b.get(disc)
	if page.signedInAs() != "bob" || page.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("signed-in page: as %q, Cache-Control %q", page.signedInAs(), page.header.Get("Cache-Control"))
	}
	page.mustContain(t, `<form method="post" action="`+disc+`/replies"`, `<label for="body">Reply as bob</label>`)
	page.mustLabelControls(t, "signed-in discussion")
	csrf := page.csrf(t)

	// Another person's session token does not fit this session.
	other := h.browser()
	other.signIn(f.alice.Token, "/")
	otherCSRF := other.get("/").csrf(t)
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"no csrf", url.Values{"body": {"It is the file lock."}}},
		{"another session's csrf", url.Values{"body": {"It is the file lock."}, "csrf": {otherCSRF}}},
	} {
		before := h.digest()
		p := b.post(disc+"/replies", tc.form)
		if p.status != http.StatusForbidden || !strings.Contains(p.body, "Form expired") {
			t.Fatalf("%s: %d\n%s", tc.name, p.status, p.body)
		}
		if h.digest() != before {
			t.Fatalf("%s changed the store", tc.name)
		}
	}
	// A cross-site form post is refused before its token is read.
	if p := b.post(disc+"/replies", url.Values{"body": {"x"}, "csrf": {csrf}}, "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
		t.Fatalf("cross-site post: %d", p.status)
	}
	// An empty reply is refused with the API's reason, the form kept.
	if p := b.post(disc+"/replies", url.Values{"body": {"  "}, "csrf": {csrf}}); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, "body: must not be empty") || p.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("empty reply: %d\n%s", p.status, p.body)
	}
	if p := b.post("/discussions/01J00000000000000000000000/replies", url.Values{"body": {"x"}, "csrf": {csrf}}); p.status != 404 {
		t.Fatalf("reply to an unknown discussion: %d", p.status)
	}

	p = b.post(disc+"/replies", url.Values{"body": {"It is the file lock.\r\n\r\nOpen with a Timeout."}, "csrf": {csrf}})
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, disc+"#reply-") {
		t.Fatalf("reply: %d to %q\n%s", p.status, loc, p.body)
	}
	page = b.get(disc)
	page.mustContain(t, `id="reply-`+strings.TrimPrefix(loc, disc+"#reply-")+`"`, "<p>It is the file lock.</p>\n<p>Open with a Timeout.</p>",
		`<span class="badge answered">Answered</span>`, "1 reply")
	// The same reply as the API's: the waiting task completed with it.
	tk, err := h.anon.WithToken(f.alice.Token).GetTask(bg(), f.openTask, nil)
	if err != nil || tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("alice's task after the web reply: %+v %v", tk.Status, err)
	}
	d, err := h.anon.Discussion(bg(), f.open)
	if err != nil || d.Status != "answered" || len(d.Replies) != 1 || d.Replies[0].AuthorName != "bob" ||
		d.Replies[0].Body != "It is the file lock.\n\nOpen with a Timeout." {
		t.Fatalf("discussion after the web reply: %+v %v", d, err)
	}

	// Reading pages while signed in writes nothing.
	before := h.digest()
	for _, path := range []string{"/", disc, "/discussions", "/login", "/records/bbolt-timeout"} {
		b.get(path)
	}
	if h.digest() != before {
		t.Fatal("reading pages while signed in changed the store")
	}

	// Sign out: the form needs its token; then the cookie is cleared and
	// the session is gone for good.
	session := b.cookie("kfa_session")
	if p := b.post("/logout", url.Values{}); p.status != http.StatusForbidden {
		t.Fatalf("sign out without csrf: %d", p.status)
	}
	// A typed /logout offers the button; it does not sign out by itself.
	p = b.get("/logout")
	p.mustContain(t, "<h1>Sign out</h1>", `action="/logout"`)
	if p.status != http.StatusOK || b.cookie("kfa_session") != session || p.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("GET /logout: %d %v", p.status, p.header)
	}
	csrf = p.csrf(t)
	p = b.post("/logout", url.Values{"csrf": {csrf}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" || b.cookie("kfa_session") != "" {
		t.Fatalf("sign out: %d %v", p.status, p.header)
	}
	replay := h.browser()
	replay.c.Jar.SetCookies(mustURL(t, h.url), []*http.Cookie{{Name: "kfa_session", Value: session}})
	if p := replay.get(disc); p.signedInAs() != "" || p.header.Get("Cache-Control") != "private, no-store" ||
		!strings.Contains(strings.Join(p.header.Values("Set-Cookie"), ";"), "kfa_session=;") {
		t.Fatalf("the ended session still signs in: %q %v", p.signedInAs(), p.header)
	}
	if p := b.get("/logout"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/" {
		t.Fatalf("GET /logout signed out: %d %v", p.status, p.header)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestWebSessionEnds: revoking an agent or rotating its token (even with
// a grace period) ends its web sessions at the next request.
func TestWebSessionEnds(t *testing.T) {
	f := newWebFixture(t, nil)
	h := f.h
	b := h.browser()
	b.signIn(f.bob.Token, "/")
	if b.get("/").signedInAs() != "bob" {
		t.Fatal("not signed in")
	}
	rot, err := h.admin.RotateAgent(bg(), f.bob.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := b.get("/discussions/" + f.open)
	if p.signedInAs() != "" || !strings.Contains(p.body, "token was rotated or revoked") || b.cookie("kfa_session") != "" {
		t.Fatalf("after rotation: signed in as %q\n%s", p.signedInAs(), p.body)
	}
	// The old token still works for the API during its grace, but starts
	// no web session.
	login := b.get("/login")
	if p := b.post("/login", url.Values{"csrf": {login.csrf(t)}, "token": {f.bob.Token}}); p.status != 401 || !strings.Contains(p.body, "was rotated") {
		t.Fatalf("sign in with the rotated token: %d\n%s", p.status, p.body)
	}
	b.signIn(rot.Token, "/")
	if b.get("/").signedInAs() != "bob" {
		t.Fatal("the new token does not sign in")
	}
	if _, err := h.admin.RevokeAgent(bg(), f.bob.ID); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/"); p.signedInAs() != "" {
		t.Fatal("a revoked agent is still signed in")
	}
}

// TestWebSignInLimits: failed sign-ins spend the address's budget of
// failed authentications, the same one bearer tokens spend.
func TestWebSignInLimits(t *testing.T) {
	f := newWebFixture(t, func(c *serverConfig) { c.AuthFailRate = 2 })
	b := f.h.browser()
	form := b.get("/login").csrf(t)
	for i := range 2 {
		if p := b.post("/login", url.Values{"csrf": {form}, "token": {"kfa_" + strings.Repeat("a", 52)}}); p.status != 401 {
			t.Fatalf("failed sign-in %d: %d", i, p.status)
		}
	}
	p := b.post("/login", url.Values{"csrf": {form}, "token": {f.bob.Token}})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || b.cookie("kfa_session") != "" {
		t.Fatalf("sign-in over the limit: %d %v", p.status, p.header)
	}
	resp, body := f.h.raw(http.MethodGet, "/api/v1/whoami", map[string]string{"Authorization": "Bearer kfa_wrong"}, "")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a bearer token from the same address: %d %s", resp.StatusCode, body)
	}
}

// TestWebSessionCookieSecure: with an https public URL the session cookie
// is Secure; and an agent without the post scope may sign in but not
// reply.
func TestWebSessionCookieSecure(t *testing.T) {
	f := newWebFixture(t, func(c *serverConfig) { c.PublicURL = "https://kfa.example" })
	reader, _ := f.h.agent("reader", "read")
	b := f.h.browser()
	form := b.get("/login")
	p := b.post("/login", url.Values{"csrf": {form.csrf(t)}, "token": {reader.Token}})
	if p.status != http.StatusSeeOther || !strings.Contains(strings.Join(p.header.Values("Set-Cookie"), "\n"), "; HttpOnly; Secure; SameSite=Lax") {
		t.Fatalf("sign in over https: %d %v", p.status, p.header)
	}
	// The test client speaks http, so it gets the Secure cookie back by hand.
	var session string
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "kfa_session" {
			session = c.Value
		}
	}
	b.c.Jar.SetCookies(mustURL(t, f.h.url), []*http.Cookie{{Name: "kfa_session", Value: session}})
	page := b.get("/discussions/" + f.open)
	page.mustContain(t, "without the post scope")
	page.mustNotContain(t, `action="/discussions/`+f.open+`/replies"`)
	before := f.h.digest()
	if p := b.post("/discussions/"+f.open+"/replies", url.Values{"body": {"hi"}, "csrf": {page.csrf(t)}}); p.status != http.StatusForbidden ||
		!strings.Contains(p.body, "post scope") {
		t.Fatalf("reply without the post scope: %d\n%s", p.status, p.body)
	}
	if f.h.digest() != before {
		t.Fatal("a refused reply changed the store")
	}
}
