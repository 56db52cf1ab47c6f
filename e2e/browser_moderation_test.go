package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/mcpserver"
)

// TestBrowserModeration drives the discussion page in headless Chromium:
// a reply's fenced code block renders as code; a <script>, a javascript:
// link and an onerror= attribute in its Markdown stay inert; the accepted
// reply comes first, marked; times are <time datetime> with the exact
// time on hover. Then a moderator signs in, reads the queue, and hides the
// flagged reply from the page: it is gone from the page, search and MCP
// for everyone else. Screenshots at 360 and 1280 px are checked not blank
// (docs/web.md shows two of them).
func TestBrowserModeration(t *testing.T) {
	tab := newTab(t)
	f := newWebFixture(t, func(c *serverConfig) { c.SearchRate = 0 })
	h := f.h
	mod, _ := h.agent("mia", "read", "moderate")
	_, carolC := h.agent("carol")
	bobC := client.New(h.url, client.WithToken(f.bob.Token))
	aliceC := client.New(h.url, client.WithToken(f.alice.Token))
	shots := t.TempDir()

	hostile := "The zanzibar cursor loop walks every key:\n\n" +
		"```go\nc := b.Cursor()\nfor k, v := c.First(); k != nil; k, v = c.Next() {\n\tfmt.Printf(\"%s=%s\\n\", k, v)\n}\n```\n\n" +
		"<script>window.kfaRan = 1</script>\n\n" +
		"[run this](javascript:window.kfaRan=2) or <img src=x onerror=\"window.kfaRan=3\"> " +
		"![logo](https://example.com/x.png \"t\") and see [the bbolt docs](https://pkg.go.dev/go.etcd.io/bbolt)."
	open1, err := bobC.Reply(bg(), f.open, hostile)
	if err != nil {
		t.Fatal(err)
	}
	bobReply := open1.Reply.ID
	better, err := carolC.Reply(bg(), f.open, "Use `Bucket.ForEach`:\n\n- it walks every key in order\n- it stops at the first error you return")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := aliceC.Accept(bg(), f.open, better.Reply.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := carolC.Flag(bg(), f.open, bobReply, "unsafe", "links to a script"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, h, "the replies")
	if !searchFinds(t, h, "zanzibar cursor loop", f.open) {
		t.Fatal("search does not find the reply before it is hidden")
	}

	// Anonymous: the page as everyone reads it.
	if st := open(t, tab, h.url+"/discussions/"+f.open); st != 200 {
		t.Fatalf("discussion: %d", st)
	}
	sel := "#reply-" + bobReply
	if got := text(t, tab, sel+" pre code"); !strings.Contains(got, "c.First(); k != nil") {
		t.Fatalf("the fenced code block renders as %q, want code", got)
	}
	if lang := eval[string](t, tab, `document.querySelector("`+sel+` pre code").className`); !strings.Contains(lang, "go") {
		t.Logf("the code block's class is %q", lang)
	}
	for js, want := range map[string]int{
		`document.querySelectorAll(".body a[href^='javascript:'], .body a[href^='JAVASCRIPT:']").length`:                       0,
		`document.querySelectorAll(".body img, .body script, .body [onerror]").length`:                                         0,
		`document.querySelectorAll(".body a[href='https://pkg.go.dev/go.etcd.io/bbolt'][rel='nofollow ugc noopener']").length`: 1,
		`document.querySelectorAll("ol.replies > li:first-child.accepted .badge.accepted").length`:                             1,
		`document.querySelectorAll("time[datetime][title]").length > 2 ? 1 : 0`:                                                1,
	} {
		if got := eval[int](t, tab, js); got != want {
			t.Errorf("%s = %d, want %d", js, got, want)
		}
	}
	if got := text(t, tab, "ol.replies > li:first-child .body"); !strings.Contains(got, "Bucket.ForEach") {
		t.Fatalf("the first reply is %q, want the accepted one", got)
	}
	noScriptRan(t, tab)
	screenshot(t, tab, shots, "answers-1280", 1280, false)
	screenshot(t, tab, shots, "answers-360", 360, false)
	screenshot(t, tab, shots, "answers-360-dark", 360, true)

	// The records browse and the queue, for the screenshots.
	if st := open(t, tab, h.url+"/records"); st != 200 {
		t.Fatalf("records: %d", st)
	}
	screenshot(t, tab, shots, "records-360", 360, false)

	// The moderator signs in from the discussion and reads the queue.
	open(t, tab, h.url+"/login?next=/moderation")
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("token"), mod.Token)), "type the token")
	if st := follow(t, tab, "sign in", chromedp.Click(chromedp.CSS("form.login button"))); st != 200 {
		t.Fatalf("after sign-in: %d", st)
	}
	if got := text(t, tab, "main h1"); got != "Moderation" {
		t.Fatalf("after sign-in the page is %q", got)
	}
	if got := text(t, tab, ".queue .flags"); !strings.Contains(got, "links to a script") {
		t.Fatalf("the queue shows %q", got)
	}
	noScriptRan(t, tab)
	screenshot(t, tab, shots, "moderation-1280", 1280, false)

	// Hide the reply from the discussion's page.
	open(t, tab, h.url+"/discussions/"+f.open)
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("why-"+bobReply), "script links, flagged unsafe")), "type the reason")
	if st := follow(t, tab, "hide", chromedp.Click(chromedp.CSS(sel+` form.moderate button[value="hide"]`))); st != 200 {
		t.Fatalf("after hiding: %d", st)
	}
	if cls := eval[string](t, tab, `document.querySelector("`+sel+`").className`); cls != "hidden-reply" {
		t.Fatalf("the moderator's page marks the reply %q, want hidden-reply", cls)
	}
	if n := eval[int](t, tab, `document.querySelectorAll("`+sel+` form.moderate button[value='unhide']").length`); n != 1 {
		t.Fatal("the hidden reply offers no Unhide")
	}
	noScriptRan(t, tab)

	// Gone for everyone else: the page, search and MCP.
	caughtUp(t, h, "the hide")
	h.browser().get("/discussions/"+f.open).mustNotContain(t, "zanzibar", bobReply)
	if searchFinds(t, h, "zanzibar cursor loop", f.open) {
		t.Fatal("search still finds the hidden reply")
	}
	cs := mcpSession(t, h, "")
	var doc mcpserver.FetchOutput
	mcpOut(t, mcpCall(t, cs, "fetch", map[string]any{"id": f.open}), &doc)
	if strings.Contains(doc.Text, "zanzibar") || !strings.Contains(doc.Text, "Bucket.ForEach") {
		t.Fatalf("MCP fetch after the hide: %q", doc.Text)
	}
	var found mcpserver.SearchOutput
	mcpOut(t, mcpCall(t, cs, "search", map[string]any{"query": "zanzibar cursor loop"}), &found)
	for _, r := range found.Results {
		if r.ID == f.open {
			t.Fatal("MCP search still finds the hidden reply")
		}
	}
	t.Logf("screenshots in %s", shots)
}
