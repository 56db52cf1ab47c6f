package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kfa-project/kfa/client"
)

// TestBrowserTrust drives the trust signals in headless Chromium: a
// signed-in person votes on an answer far down a long discussion, sees its
// score change and the button pressed, and is left where they were on
// the page (the page's one script keeps the place across the form's
// round trip); the author's name leads to the profile, with the
// reputation the vote gave; the author, signed in, sees the unread count
// in the header and the inbox page, and marks the entries read. A failed
// report shows under the answer with its environment. Screenshots for
// docs/web.md.
func TestBrowserTrust(t *testing.T) {
	tab := newTab(t)
	f := newWebFixture(t, func(c *serverConfig) { c.SearchRate = 0 })
	h := f.h
	carolA, _ := h.agent("carol")
	_, danC := h.agent("dan")
	bobC := client.New(h.url, client.WithToken(f.bob.Token))
	// Long answers, so that the page scrolls and the voted one is far down.
	long := strings.Repeat("A long explanation of the cursor walk, line after line.\n\n", 12)
	var last string
	for i := range 4 {
		r, err := bobC.Reply(bg(), f.open, fmt.Sprintf("Answer %d.\n\n%s", i, long))
		if err != nil {
			t.Fatal(err)
		}
		last = r.Reply.ID
	}
	if _, err := danC.Verify(bg(), f.open, last, "failed", "bbolt 1.3 on windows", "the lock is not released"); err != nil {
		t.Fatal(err)
	}
	shots := t.TempDir()

	browserSignIn(t, tab, h.url, carolA.Token)
	if st := open(t, tab, h.url+"/discussions/"+f.open); st != 200 {
		t.Fatalf("discussion: %d", st)
	}
	sel := "#reply-" + last
	if got := text(t, tab, sel+" .score"); !strings.Contains(got, "0") {
		t.Fatalf("score before the vote: %q", got)
	}
	if got := text(t, tab, sel+" .failures"); !strings.Contains(got, "bbolt 1.3 on windows") || !strings.Contains(got, "the lock is not released") {
		t.Fatalf("the failed report under the answer: %q", got)
	}
	if got := text(t, tab, sel+" .verified"); !strings.HasPrefix(got, "Failed for 1 agent") {
		t.Fatalf("the verifications line of an answer that only failed: %q", got)
	}
	// Scroll the answer into the middle of the viewport, then vote.
	eval[bool](t, tab, `(() => { const el = document.querySelector("`+sel+`"); window.scrollTo(0, el.offsetTop - 200); return true })()`)
	before := eval[float64](t, tab, `window.scrollY`)
	if before < 500 {
		t.Fatalf("the page does not scroll far enough to test the place (%v px)", before)
	}
	if st := follow(t, tab, "vote up", chromedp.Click(chromedp.CSS(sel+" form.vote button[value='1']"))); st != 200 {
		t.Fatalf("after the vote: %d", st)
	}
	if got := text(t, tab, sel+" .score"); !strings.Contains(got, "1") {
		t.Fatalf("score after the vote: %q", got)
	}
	if pressed := eval[string](t, tab, `document.querySelector("`+sel+` form.vote button[aria-pressed]").getAttribute("aria-pressed")`); pressed != "true" {
		t.Fatalf("the up button after the vote: aria-pressed %q", pressed)
	}
	after := eval[float64](t, tab, `window.scrollY`)
	if d := after - before; d < -2 || d > 2 {
		t.Fatalf("the reader was moved: scrolled to %v before the vote, %v after", before, after)
	}
	if loc := eval[string](t, tab, `location.hash`); loc != "" {
		t.Fatalf("with the script, the page came back to %q, not to where the reader was", loc)
	}
	screenshot(t, tab, shots, "web-vote-1280", 1280, false)
	screenshot(t, tab, shots, "web-vote-390", 390, false)

	// The author's name leads to the profile.
	open(t, tab, h.url+"/discussions/"+f.open)
	if st := follow(t, tab, "open the profile", chromedp.Click(chromedp.CSS(sel+" .reply-head a.author"))); st != 200 {
		t.Fatalf("profile: %d", st)
	}
	if got := text(t, tab, "main"); !strings.Contains(got, "bob") || !strings.Contains(got, "5 reputation") || !strings.Contains(got, "answers") {
		t.Fatalf("bob's profile reads %q", got)
	}
	screenshot(t, tab, shots, "web-profile-1280", 1280, false)
	browserSignOut(t, tab)

	// The author sees the unread count, then the inbox.
	browserSignIn(t, tab, h.url, f.bob.Token)
	open(t, tab, h.url+"/")
	if got := text(t, tab, "a.inbox-link"); !strings.Contains(got, "Inbox") || !strings.Contains(got, "1") {
		t.Fatalf("the header's inbox link reads %q, want one unread entry", got)
	}
	if st := follow(t, tab, "open the inbox", chromedp.Click(chromedp.CSS("a.inbox-link"))); st != 200 {
		t.Fatalf("inbox: %d", st)
	}
	if got := text(t, tab, "main"); !strings.Contains(got, "Your answer got votes") {
		t.Fatalf("the inbox reads %q", got)
	}
	screenshot(t, tab, shots, "web-inbox-1280", 1280, false)
	screenshot(t, tab, shots, "web-inbox-390", 390, true)
	if st := follow(t, tab, "mark read", chromedp.Click(chromedp.CSS("form.inbox button"))); st != 200 {
		t.Fatalf("after marking read: %d", st)
	}
	if n := eval[int](t, tab, `document.querySelectorAll("a.inbox-link .count").length`); n != 0 {
		t.Fatal("the unread count stays after the entries were marked read")
	}
	noScriptRan(t, tab)
	t.Logf("screenshots in %s", shots)
}
