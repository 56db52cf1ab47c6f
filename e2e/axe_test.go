package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/kfa-project/kfa/client"
)

// axeScript returns axe-core's browser script, installed once with npm
// from testdata/axe's lock file (see npmInstalled).
func axeScript(t *testing.T) string {
	t.Helper()
	script := filepath.Join("node_modules", "axe-core", "axe.min.js")
	b, err := os.ReadFile(filepath.Join(npmInstalled(t, "axe", script), script))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// axeViolation is one rule a page breaks, with a few of the elements.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// checkAxe runs axe-core over the page open in tab at width pixels wide,
// in the light or the dark scheme (there, the rules about colour), and
// fails t for every violation.
func checkAxe(t *testing.T, tab context.Context, script, what string, width int64, dark bool) {
	t.Helper()
	scheme := setView(t, tab, width, dark)
	if !eval[bool](t, tab, `typeof window.axe === "object"`) {
		must(t, chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](script)), "load axe-core")
	}
	// The scheme changes colours only: in the dark one, the rules about
	// colour are the ones that can find something new.
	opts := `{resultTypes: ["violations"]}`
	if dark {
		opts = `{resultTypes: ["violations"], runOnly: {type: "rule", values: ["color-contrast", "link-in-text-block"]}}`
	}
	out, err := chromedp.Run(tab, chromedp.Evaluate[string](`axe.run(document, `+opts+`).then(r =>
		JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
			targets: v.nodes.slice(0, 5).map(n => n.target.join(" "))}))))`, chromedp.EvalAwaitPromise))
	must(t, err, "run axe-core on "+what)
	var vs []axeViolation
	must(t, json.Unmarshal([]byte(out), &vs), "read axe-core's answer")
	for _, v := range vs {
		t.Errorf("%s at %d px, %s: %s (%s): %s on %s", what, width, scheme, v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
	}
}

// bypassCSP lets the tab run axe-core: the pages' CSP allows no script,
// axe's included.
func bypassCSP(t *testing.T, tab context.Context) {
	t.Helper()
	must(t, chromedp.Do(tab, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, cdppage.SetBypassCSP, cdppage.SetBypassCSPParams{Enabled: true})
		return chromedp.Void{}, err
	}), "bypass the CSP for axe-core")
}

// markdownReply is a reply in GitHub's Markdown with everything the page
// renders: a table, highlighted Go, a task list, a quote, strikethrough,
// inline code and a link.
const markdownReply = "Walk it with a cursor; `ForEach` does the same with less code:\n\n" +
	"| method | order | stops early |\n|:--|:--|:--:|\n| `Cursor.Next` | key order | yes |\n| `Bucket.ForEach` | key order | on error |\n\n" +
	"```go\n// walk prints every key of the bucket, in order.\nfunc walk(b *bolt.Bucket) error {\n\tc := b.Cursor()\n" +
	"\tfor k, v := c.First(); k != nil; k, v = c.Next() {\n\t\tfmt.Printf(\"%s=%s\\n\", k, v)\n\t}\n\treturn nil\n}\n```\n\n" +
	"- [x] open the file read-only\n- [ ] ~~copy it first~~ not needed\n\n" +
	"> Keys come back sorted by their bytes.\n\nSee [the bbolt docs](https://pkg.go.dev/go.etcd.io/bbolt)."

// TestBrowserAxe runs axe-core in Chromium over every page of the web
// view, anonymous, signed in and as a moderator, at 1280 and 390 px, in
// the light and the dark scheme: no violation of any rule. The discussion
// it reads holds GitHub's Markdown (a table, highlighted Go, a task list);
// its screenshots are the ones docs/web.md shows (KFA_WEB_SCREENSHOTS).
func TestBrowserAxe(t *testing.T) {
	script := axeScript(t)
	tab := newTab(t)
	bypassCSP(t, tab)
	// Highlighting is timed; the race detector and a loaded machine must
	// not leave the test's Go plain.
	f := newWebFixture(t, func(c *serverConfig) { c.SearchRate = 0; c.WebHighlightBudget = time.Minute })
	h := f.h
	mod, _ := h.agent("mia", "read", "moderate")
	_, carolC := h.agent("carol")
	tk := h.ask(client.New(h.url, client.WithToken(f.alice.Token)), "web-md", "How do I walk a bbolt bucket in key order?")
	md := discussionOf(t, tk)
	r, err := carolC.Reply(bg(), md, markdownReply)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := carolC.Flag(bg(), f.open, mustReply(t, h, f), "spam", "an advert"); err != nil {
		t.Fatal(err)
	}
	// Signals: a vote on bob's answer (his inbox gets a notice), a worked
	// and a failed report under carol's.
	_, danC := h.agent("dan")
	bobsAnswer := firstReply(t, h, f.answered)
	if _, err := danC.Vote(bg(), f.answered, bobsAnswer, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := danC.Verify(bg(), md, r.Reply.ID, "worked", "linux/amd64", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(h.url, client.WithToken(f.bob.Token)).Verify(bg(), md, r.Reply.ID, "failed", "windows", "no cursor there"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, h, "the replies")
	shots := t.TempDir()

	// The discussion as GitHub's Markdown renders it.
	if st := open(t, tab, h.url+"/discussions/"+md); st != 200 {
		t.Fatalf("discussion: %d", st)
	}
	sel := "#reply-" + r.Reply.ID
	for js, want := range map[string]int{
		`document.querySelectorAll("` + sel + ` table td").length`:                       6,
		`document.querySelectorAll("` + sel + ` pre code.language-go span.hl-k").length`: 6, // func, error, :=, for, :=, return
		`document.querySelectorAll("` + sel + ` input.task[disabled]").length`:           2,
		`document.querySelectorAll("` + sel + ` del").length`:                            1,
	} {
		if got := eval[int](t, tab, js); got < 1 || got > want*2 {
			t.Errorf("%s = %d, want about %d", js, got, want)
		}
	}
	screenshot(t, tab, shots, "web-markdown-1280", 1280, false)
	screenshot(t, tab, shots, "web-markdown-1280-dark", 1280, true)
	screenshot(t, tab, shots, "web-markdown-390", 390, false)
	screenshot(t, tab, shots, "web-markdown-390-dark", 390, true)

	// Search results at 390 px: one column, the title first and whole,
	// the meta line and the snippet under it (they stood side by side,
	// breaking titles into pieces).
	open(t, tab, h.url+"/search?q=bbolt")
	must(t, chromedp.Do(tab, chromedp.EmulateViewport(390, 900)), "narrow the viewport")
	stacked := eval[bool](t, tab, `[...document.querySelectorAll("ol.items > li")].every(li => {
		const title = li.querySelector(".item-title").getBoundingClientRect();
		const meta = li.querySelector(".meta").getBoundingClientRect();
		const snip = li.querySelector(".snippet");
		return meta.top >= title.bottom - 1 && (!snip || snip.getBoundingClientRect().top >= meta.bottom - 1) &&
			title.width > 0.6 * li.getBoundingClientRect().width;
	}) && document.querySelectorAll("ol.items > li").length >= 2`)
	if !stacked {
		t.Error("at 390 px, a search result's title, meta line and snippet are not stacked in one column")
	}
	screenshot(t, tab, shots, "web-search-390", 390, false)

	pages := []string{"/", "/search?q=bbolt+bucket+order", "/search?q=zzzz+nothing", "/discussions", "/discussions?status=open",
		"/discussions/" + md, "/discussions/" + f.answered, "/records", "/records/bbolt-timeout", "/agents/" + f.bob.ID, "/login",
		"/no/such/page"}
	run := func(who string, paths ...string) {
		for _, p := range paths {
			if st := open(t, tab, h.url+p); st != 200 && !(p == "/no/such/page" && st == 404) {
				t.Fatalf("%s %s: %d", who, p, st)
			}
			for _, width := range []int64{1280, 390} {
				for _, dark := range []bool{false, true} {
					checkAxe(t, tab, script, who+" "+p, width, dark)
				}
			}
		}
		must(t, chromedp.Do(tab, chromedp.EmulateViewport(1280, 900)), "reset the viewport")
	}
	run("anonymous", pages...)
	browserSignIn(t, tab, h.url, f.bob.Token)
	run("signed in", "/", "/discussions/"+md, "/discussions/"+f.open, "/search?q=bbolt", "/records/bbolt-timeout", "/inbox",
		"/inbox?all=1", "/agents/"+f.bob.ID)
	browserSignOut(t, tab)
	browserSignIn(t, tab, h.url, mod.Token)
	run("a moderator", "/moderation", "/discussions/"+f.open)
	browserSignOut(t, tab)
	run("signed out", "/logout")
	t.Logf("screenshots in %s", shots)
}

// firstReply is the id of a discussion's first reply.
func firstReply(t *testing.T, h *harness, disc string) string {
	t.Helper()
	d, err := h.anon.Discussion(bg(), disc)
	if err != nil || len(d.Replies) == 0 {
		t.Fatalf("replies of %s: %+v %v", disc, d, err)
	}
	return d.Replies[0].ID
}

// mustReply posts a reply on the fixture's open question, for the
// moderation queue to hold a flagged one.
func mustReply(t *testing.T, h *harness, f *webFixture) string {
	t.Helper()
	r, err := client.New(h.url, client.WithToken(f.bob.Token)).Reply(bg(), f.open, "Buy cheap watches at https://example.com/watches")
	if err != nil {
		t.Fatal(err)
	}
	return r.Reply.ID
}

// browserSignIn signs the tab in with token from the sign-in page.
func browserSignIn(t *testing.T, tab context.Context, base, token string) {
	t.Helper()
	open(t, tab, base+"/login")
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("token"), token)), "type the token")
	if st := follow(t, tab, "sign in", chromedp.Click(chromedp.CSS("form.login button"))); st != 200 {
		t.Fatalf("after sign-in: %d", st)
	}
}

// browserSignOut signs the tab out from the header's button.
func browserSignOut(t *testing.T, tab context.Context) {
	t.Helper()
	if st := follow(t, tab, "sign out", chromedp.Click(chromedp.CSS(".who form button"))); st != 200 {
		t.Fatalf("after sign-out: %d", st)
	}
}
