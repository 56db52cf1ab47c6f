package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
)

// browser is a cookie-keeping HTTP client that does not follow redirects,
// so tests see each 303 of the sign-in and reply forms.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (h *harness) browser() *browser {
	h.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return &browser{t: h.t, base: h.url, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// page is one answer as the tests look at it.
type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	return b.do(req)
}

// post sends a form; extra headers come in name, value pairs.
func (b *browser) post(path string, form url.Values, headers ...string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.base + "/login")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the first form on p.
func (p page) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field on the page:\n%s", p.body)
	}
	return m[1]
}

// signIn signs b in with token and checks the redirect to next.
func (b *browser) signIn(token, next string) {
	b.t.Helper()
	form := b.get("/login?next=" + url.QueryEscape(next))
	p := b.post("/login", url.Values{"csrf": {form.csrf(b.t)}, "token": {token}, "next": {next}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != next {
		b.t.Fatalf("sign in: %d to %q, want 303 to %q:\n%s", p.status, p.header.Get("Location"), next, p.body)
	}
}

// signedInAs reports the agent name the page header shows, or "".
func (p page) signedInAs() string {
	m := regexp.MustCompile(`Signed in as <strong>([^<]*)</strong>`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return m[1]
}

func (p page) mustContain(t *testing.T, what ...string) {
	t.Helper()
	for _, w := range what {
		if !strings.Contains(p.body, w) {
			t.Fatalf("page lacks %q:\n%s", w, p.body)
		}
	}
}

func (p page) mustNotContain(t *testing.T, what ...string) {
	t.Helper()
	low := strings.ToLower(p.body)
	for _, w := range what {
		if strings.Contains(low, strings.ToLower(w)) {
			t.Fatalf("page contains %q:\n%s", w, p.body)
		}
	}
}

// mustBeSecured checks the headers every page of the web view carries.
func (p page) mustBeSecured(t *testing.T, what string) {
	t.Helper()
	csp := p.header.Get("Content-Security-Policy")
	// Scripts: the page's own static file only (script-src 'self'), never
	// an inline one or another origin's.
	if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") ||
		strings.Contains(csp, "unsafe-") || !strings.Contains(csp, "script-src 'self';") {
		t.Errorf("%s: Content-Security-Policy %q", what, csp)
	}
	if p.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q", what, p.header.Get("X-Content-Type-Options"))
	}
	if p.header.Get("Referrer-Policy") == "" {
		t.Errorf("%s: no Referrer-Policy", what)
	}
}

// webFixture is a server with two agents, an answered and an open
// discussion, and one record.
type webFixture struct {
	h              *harness
	alice, bob     api.Agent // alice asks, bob answers
	answered, open string    // discussion ids
	openTask       string    // alice's task on the open discussion
}

func newWebFixture(t *testing.T, mutate func(*serverConfig)) *webFixture {
	t.Helper()
	h := start(t, mutate)
	f := &webFixture{h: h}
	var ac, bc *client.Client
	f.alice, ac = h.agent("alice")
	f.bob, bc = h.agent("bob")
	tk := h.ask(ac, "web-1", "How do I take a hot backup of a bbolt file?")
	f.answered = discussionOf(t, tk)
	if _, err := bc.Reply(context.Background(), f.answered, "Use Tx.WriteTo inside a read transaction."); err != nil {
		t.Fatal(err)
	}
	tk = h.ask(ac, "web-2", "Why does bbolt Open hang when two processes share a file?")
	f.open, f.openTask = discussionOf(t, tk), tk.ID
	f.importRecords(`{"id":"bbolt-timeout","kind":"fix","product":"bbolt","title":"bbolt Open times out: the file is locked","body":"Another process holds the lock.\n\nSee https://pkg.go.dev/go.etcd.io/bbolt#Options.","url":"https://github.com/etcd-io/bbolt"}`)
	return f
}

func (f *webFixture) importRecords(lines ...string) {
	f.h.t.Helper()
	sum, err := f.h.admin.ImportRecords(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), true)
	if err != nil || sum.Rejected != 0 {
		f.h.t.Fatalf("import: %+v %v", sum, err)
	}
}

var (
	formControl = regexp.MustCompile(`<(input|textarea|select)\b[^>]*>`)
	controlID   = regexp.MustCompile(`\bid="([^"]+)"`)
)

// mustLabelControls checks that every visible form control has an id and
// a <label for> naming it.
func (p page) mustLabelControls(t *testing.T, what string) {
	t.Helper()
	for _, c := range formControl.FindAllString(p.body, -1) {
		if strings.Contains(c, `type="hidden"`) {
			continue
		}
		m := controlID.FindStringSubmatch(c)
		if m == nil || !strings.Contains(p.body, `<label for="`+m[1]+`">`) {
			t.Errorf("%s: form control without a label: %s", what, c)
		}
	}
}
