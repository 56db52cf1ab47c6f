package e2e

import (
	"context"
	"encoding/xml"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kfa-project/kfa/server"
)

// TestWebPages: every page of the web view answers with its status, an
// HTML content type, the security headers, and a Cache-Control that fits
// it, without a browser.
func TestWebPages(t *testing.T) {
	f := newWebFixture(t, nil)
	b := f.h.browser()
	css := regexp.MustCompile(`href="(/static/kfa\.[0-9a-f]+\.css)"`).FindStringSubmatch(b.get("/").body)
	if css == nil {
		t.Fatal("the home page links no stylesheet")
	}
	const public = "public, max-age=30"
	for _, tc := range []struct {
		name, path string
		status     int
		cache      string
		contains   []string
	}{
		{"home", "/", 200, public, []string{"Knowledge for agents", "<strong>1</strong> open question", "<strong>1</strong> answered",
			"<strong>1</strong> knowledge record", "/discussions/" + f.open, "/discussions/" + f.answered, `role="search"`}},
		{"search box", "/search", 200, public, []string{`<label for="q">`}},
		{"search", "/search?q=bbolt+open+times+out", 200, public, []string{"/records/bbolt-timeout", "Record"}},
		{"search with kind", "/search?q=bbolt+open+times+out&kind=fix", 200, public, []string{"/records/bbolt-timeout"}},
		{"search, no hit", "/search?q=zebra+quantum+marmalade", 200, public, []string{"0 results", "Nothing found"}},
		{"search, query too long", "/search?q=" + strings.Repeat("x", 1001), 400, "private, no-store", []string{"query: 1001 characters"}},
		{"search, bad kind", "/search?q=bbolt&kind=" + strings.Repeat("k", 65), 400, "private, no-store", []string{"kind:"}},
		{"all discussions", "/discussions", 200, public, []string{"2 questions", f.open, f.answered}},
		{"open discussions", "/discussions?status=open", 200, public, []string{"1 question", f.open}},
		{"answered discussions", "/discussions?status=answered", 200, public, []string{"1 question", f.answered, "Answered"}},
		{"bad status", "/discussions?status=closed", 400, "private, no-store", []string{"must be open or answered"}},
		{"bad page token", "/discussions?pageToken=bogus", 400, "private, no-store", []string{"pageToken"}},
		{"open discussion", "/discussions/" + f.open, 200, public, []string{"Why does bbolt Open hang", "No replies yet", "Sign in</a> to reply"}},
		{"answered discussion", "/discussions/" + f.answered, 200, public, []string{"How do I take a hot backup", "Use Tx.WriteTo", "bob", "1 reply", "Answered"}},
		{"unknown discussion", "/discussions/01J00000000000000000000000", 404, public, []string{"Page not found", "no discussion with this id"}},
		{"malformed discussion id", "/discussions/%3Cscript%3E", 404, public, []string{"Page not found"}},
		{"record", "/records/bbolt-timeout", 200, public, []string{"bbolt Open times out", `href="https://github.com/etcd-io/bbolt" rel="nofollow ugc noopener"`}},
		{"unknown record", "/records/nope", 404, public, []string{"no knowledge record with this id"}},
		{"bad record id", "/records/..%2f..%2fetc", 404, public, []string{"Page not found"}},
		{"sign in", "/login", 200, "private, no-store", []string{`method="post" action="/login"`, `type="password"`, `<label for="token">`}},
		{"unknown page", "/no/such/page", 404, public, []string{"There is no page at this address"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.get(tc.path)
			if p.status != tc.status {
				t.Fatalf("status %d, want %d:\n%s", p.status, tc.status, p.body)
			}
			if ct := p.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := p.header.Get("Cache-Control"); cc != tc.cache {
				t.Errorf("Cache-Control %q, want %q", cc, tc.cache)
			}
			p.mustBeSecured(t, tc.path)
			p.mustContain(t, tc.contains...)
			p.mustNotContain(t, "<script", "style=")
			p.mustLabelControls(t, tc.path)
			for _, landmark := range []string{"<header", "<main", "<nav", "<footer", `<html lang="en">`} {
				p.mustContain(t, landmark)
			}
		})
	}

	// The stylesheet is cached for good under its hashed name; a HEAD of a
	// page answers its headers.
	p := b.get(css[1])
	if p.status != 200 || p.header.Get("Content-Type") != "text/css; charset=utf-8" ||
		p.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.Contains(p.body, "prefers-color-scheme: dark") {
		t.Fatalf("stylesheet: %d %v", p.status, p.header)
	}
	if p := b.get("/static/kfa.0000000000.css"); p.status != 404 {
		t.Fatalf("unknown static file: %d", p.status)
	}
	resp, _ := f.h.raw(http.MethodHead, "/", nil, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("HEAD /: %d %v", resp.StatusCode, resp.Header)
	}
	// API clients keep their JSON errors, at unknown paths too.
	resp, body := f.h.raw(http.MethodGet, "/no/such/page", nil, "")
	if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || reason(body) == "" {
		t.Fatalf("unknown path without Accept: text/html: %d %s", resp.StatusCode, body)
	}
	resp, body = f.h.raw(http.MethodGet, "/api/v1/nothing", map[string]string{"Accept": "text/html"}, "")
	if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("unknown API path from a browser: %d %s", resp.StatusCode, body)
	}
}

// TestWebEscapesUserContent: HTML in questions, replies, names and
// records shows as text; bodies are Markdown without images, and links
// go to http(s) addresses only.
func TestWebEscapesUserContent(t *testing.T) {
	h := start(t, nil)
	_, asker := h.agent(`<b>asker</b>`)
	_, replier := h.agent(`"><script>alert(3)</script>`)
	res, err := asker.SendMessage(bg(), askReq("x-1", `<script>alert(1)</script> why?`, map[string]any{
		"details": "<img src=x onerror=alert(2)>\n\n![pic](https://evil.example/p.png) [click](javascript:alert(4))\n" +
			"see https://example.com/a?b=1&c=<2>. and (https://en.wikipedia.org/wiki/Go_(game))",
		"product": `<i>p</i>`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	id := discussionOf(t, *res.Task)
	if _, err := replier.Reply(bg(), id, "</textarea><script>alert(5)</script>\r\n<a href=\"javascript:alert(6)\">x</a>"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.admin.ImportRecords(context.Background(), strings.NewReader(
		`{"id":"hostile","kind":"fix","title":"<script>alert(7)</script>","body":"<style>body{display:none}</style>","tags":["<u>t</u>"],"url":"https://example.com/\"onmouseover=\"alert(8)"}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	for _, path := range []string{"/", "/discussions", "/discussions/" + id, "/records/hostile", "/search?q=alert+script"} {
		p := b.get(path)
		if p.status != 200 {
			t.Fatalf("%s: %d", path, p.status)
		}
		p.mustNotContain(t, "<script", "<img", "<style", "<b>", "<i>", "<u>", "javascript:alert(6)\"", `href="javascript`, `"onmouseover`,
			"evil.example", "javascript:alert(4)")
	}
	p := b.get("/discussions/" + id)
	p.mustContain(t,
		"&lt;script&gt;alert(1)&lt;/script&gt; why?",
		"<p>&lt;img src=x onerror=alert(2)&gt;</p>",
		"<p>pic click<br>", // an image is its alt text; a javascript: link its text
		`<a href="https://example.com/a?b=1&amp;c=" rel="nofollow ugc noopener">https://example.com/a?b=1&amp;c=</a>&lt;2&gt;.`,
		`(<a href="https://en.wikipedia.org/wiki/Go_(game)" rel="nofollow ugc noopener">https://en.wikipedia.org/wiki/Go_(game)</a>)`,
		"&lt;/textarea&gt;&lt;script&gt;alert(5)&lt;/script&gt;<br>",
		"&lt;b&gt;asker&lt;/b&gt;",
		"&#34;&gt;&lt;script&gt;alert(3)&lt;/script&gt;",
	)
	b.get("/records/hostile").mustContain(t, "&lt;script&gt;alert(7)&lt;/script&gt;", "&lt;style&gt;body{display:none}&lt;/style&gt;",
		`href="https://example.com/%22onmouseover=%22alert%288%29"`)
}

// TestWebFeeds: the Atom feeds parse as XML, with one entry per discussion
// of the listing's first page, newest first, and absolute links.
func TestWebFeeds(t *testing.T) {
	f := newWebFixture(t, func(c *serverConfig) { c.PublicURL = "https://kfa.example" })
	_, carol := f.h.agent("carol")
	for i := range 3 {
		f.h.ask(carol, "feed-"+string(rune('a'+i)), "Feed question <"+string(rune('a'+i))+"> & more")
	}
	type entry struct {
		ID        string `xml:"id"`
		Title     string `xml:"title"`
		Updated   string `xml:"updated"`
		Published string `xml:"published"`
		Author    string `xml:"author>name"`
		Link      struct {
			Href string `xml:"href,attr"`
		} `xml:"link"`
	}
	type feed struct {
		XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
		ID      string   `xml:"id"`
		Title   string   `xml:"title"`
		Updated string   `xml:"updated"`
		Entries []entry  `xml:"entry"`
	}
	b := f.h.browser()
	for _, tc := range []struct {
		query, status string
		want          int
	}{{"", "", 5}, {"?status=open", "open", 4}, {"?status=answered", "answered", 1}} {
		p := b.get("/discussions.atom" + tc.query)
		if p.status != 200 || p.header.Get("Content-Type") != "application/atom+xml; charset=utf-8" ||
			!strings.HasPrefix(p.header.Get("Cache-Control"), "public, max-age=") {
			t.Fatalf("feed %s: %d %v", tc.query, p.status, p.header)
		}
		var got feed
		if err := xml.Unmarshal([]byte(p.body), &got); err != nil {
			t.Fatalf("feed %s does not parse: %v\n%s", tc.query, err, p.body)
		}
		list, err := f.h.anon.Discussions(bg(), tc.status, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Entries) != tc.want || len(list.Discussions) != tc.want {
			t.Fatalf("feed %s: %d entries, the listing's first page has %d, want %d", tc.query, len(got.Entries), len(list.Discussions), tc.want)
		}
		if got.ID != "https://kfa.example/discussions.atom"+tc.query || got.Updated == "" || got.Title == "" {
			t.Fatalf("feed %s: %+v", tc.query, got)
		}
		for i, e := range got.Entries {
			d := list.Discussions[i]
			want := "https://kfa.example/discussions/" + d.ID
			if e.ID != want || e.Link.Href != want || e.Title != d.Title || e.Published != d.CreatedAt || e.Author != d.AuthorName || e.Updated == "" {
				t.Fatalf("feed %s entry %d: %+v, discussion %+v", tc.query, i, e, d)
			}
		}
	}
	if p := b.get("/discussions.atom?status=nope"); p.status != 400 {
		t.Fatalf("feed with a bad status: %d", p.status)
	}
}

// TestWebOff: --web=false leaves an API-only server.
func TestWebOff(t *testing.T) {
	h := start(t, func(c *server.Config) { c.Web = false })
	for _, path := range []string{"/", "/login", "/discussions", "/discussions.atom", "/search?q=x"} {
		resp, body := h.raw(http.MethodGet, path, map[string]string{"Accept": "text/html"}, "")
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s with the web view off: %d %s", path, resp.StatusCode, body)
		}
	}
	resp, _ := h.raw(http.MethodGet, "/api/v1/discussions", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("the API with the web view off: %d", resp.StatusCode)
	}
}

// TestWebSearch: the search page shows what the search path returns,
// answered discussions included, and counts against the per-address
// search limit with a 429 and Retry-After when over it.
func TestWebSearch(t *testing.T) {
	f := newWebFixture(t, func(c *serverConfig) { c.SearchRate = 2 })
	if err := f.h.srv.Core().Index.Sync(bg()); err != nil {
		t.Fatal(err)
	}
	b := f.h.browser()
	p := b.get("/search?q=hot+backup+bbolt+file")
	if p.status != 200 {
		t.Fatalf("search: %d\n%s", p.status, p.body)
	}
	p.mustContain(t, `<span class="badge">Discussion</span> <span class="badge answered">Answered</span> 1 reply`,
		`href="/discussions/`+f.answered+`"`, "Use Tx.WriteTo")
	if p := b.get("/search?q=bbolt"); p.status != 200 {
		t.Fatalf("second search: %d", p.status)
	}
	p = b.get("/search?q=bbolt")
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || p.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("search over the limit: %d %v", p.status, p.header)
	}
	p.mustContain(t, "too many searches")
	// The box alone is no search and costs nothing.
	if p := b.get("/search"); p.status != 200 {
		t.Fatalf("search box while limited: %d", p.status)
	}
}

// TestWebSearchOpenQuestion: a search that asks an open question shows
// it as open, with its reply count, its page, and the hint to reply there;
// an answered one shows when it was answered.
func TestWebSearchOpenQuestion(t *testing.T) {
	f := newWebFixture(t, nil)
	if err := f.h.srv.Core().Index.Sync(bg()); err != nil {
		t.Fatal(err)
	}
	b := f.h.browser()
	p := b.get("/search?q=why+does+bbolt+open+hang+when+two+processes+share+a+file")
	if p.status != 200 {
		t.Fatalf("search: %d\n%s", p.status, p.body)
	}
	p.mustContain(t, `<span class="badge">Discussion</span> <span class="badge open">Open</span> 0 replies`,
		`href="/discussions/`+f.open+`"`, "This question is open: if you know the answer")
	p = b.get("/search?q=hot+backup+bbolt+file")
	p.mustContain(t, `href="/discussions/`+f.answered+`"`, "· answered <time datetime=")
}

// TestWebPagination: the discussions page walks the listing with the
// API's page tokens, 20 a page, and the feed holds the first page.
func TestWebPagination(t *testing.T) {
	f := newWebFixture(t, func(c *serverConfig) { c.AskRate, c.MaxOpenTasks = 0, 0 })
	_, dave := f.h.agent("dave")
	for i := range 21 {
		f.h.ask(dave, fmt.Sprintf("page-%d", i), fmt.Sprintf("Paged question number %d?", i))
	}
	// 23 discussions: the fixture's two and these 21; 22 of them open.
	next := regexp.MustCompile(`<a href="(/discussions\?[^"]+)" rel="next">`)
	item := regexp.MustCompile(`<a class="item-title" href="/discussions/([0-9A-Z]+)">`)
	b := f.h.browser()
	for _, tc := range []struct {
		status string
		pages  []int
	}{{"", []int{20, 3}}, {"open", []int{20, 2}}, {"answered", []int{1}}} {
		path := "/discussions"
		if tc.status != "" {
			path += "?status=" + tc.status
		}
		seen := map[string]bool{}
		for i, want := range tc.pages {
			p := b.get(path)
			if p.status != 200 {
				t.Fatalf("%s: %d", path, p.status)
			}
			items := item.FindAllStringSubmatch(p.body, -1)
			if len(items) != want {
				t.Fatalf("%s page %d: %d items, want %d", tc.status, i+1, len(items), want)
			}
			for _, it := range items {
				if seen[it[1]] {
					t.Fatalf("%s: discussion %s on two pages", tc.status, it[1])
				}
				seen[it[1]] = true
			}
			m := next.FindStringSubmatch(p.body)
			if (m != nil) != (i < len(tc.pages)-1) {
				t.Fatalf("%s page %d: next link %v", tc.status, i+1, m)
			}
			if m != nil {
				path = html.UnescapeString(m[1])
				if tc.status != "" && !strings.Contains(path, "status="+tc.status) {
					t.Fatalf("the next page of %s loses the filter: %s", tc.status, path)
				}
			}
		}
	}
	var got struct {
		Entries []struct{} `xml:"entry"`
	}
	if err := xml.Unmarshal([]byte(b.get("/discussions.atom").body), &got); err != nil || len(got.Entries) != 20 {
		t.Fatalf("feed of 23 discussions: %d entries, %v", len(got.Entries), err)
	}
}

// TestWebRefusesBytesThatAreNotText: an address or a form that is not
// valid UTF-8 is refused with 400 on every route that takes text, and the
// bytes never reach the page.
func TestWebRefusesBytesThatAreNotText(t *testing.T) {
	f := newWebFixture(t, nil)
	b := f.h.browser()
	for _, path := range []string{
		"/search?q=%ff%fe",
		"/search?q=bbolt&kind=%c3",
		"/search?%ff=bbolt",
		"/discussions?status=%ff",
		"/discussions?pageToken=%fe",
		"/discussions.atom?status=%ff",
		"/discussions/%ff%fe",
		"/records/%ff%fe",
		"/login?next=/%ff",
		"/logout?x=%ff",
		"/?q=%ff",
		"/no/such/%ff",
	} {
		t.Run("GET "+path, func(t *testing.T) {
			p := b.get(path)
			if p.status != http.StatusBadRequest || !utf8.ValidString(p.body) || !strings.Contains(p.body, "not valid UTF-8") {
				t.Fatalf("status %d, valid UTF-8 %v:\n%s", p.status, utf8.ValidString(p.body), p.body)
			}
		})
	}
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/login", url.Values{"token": {"kfa_\xff\xfe"}, "csrf": {"x"}}},
		{"/login", url.Values{"next": {"/\xff"}}},
		{"/discussions/" + f.open + "/replies", url.Values{"body": {"an answer \xff"}, "csrf": {"x"}}},
		{"/logout", url.Values{"csrf": {"\xfe"}}},
	} {
		t.Run("POST "+tc.path, func(t *testing.T) {
			p := b.post(tc.path, tc.form, "Origin", f.h.url)
			if p.status != http.StatusBadRequest || !utf8.ValidString(p.body) || !strings.Contains(p.body, "not valid UTF-8") {
				t.Fatalf("status %d, valid UTF-8 %v:\n%s", p.status, utf8.ValidString(p.body), p.body)
			}
		})
	}
}
