package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromium finds the browser for the browser tests. Without one the tests
// skip, saying how to get it, unless KFA_REQUIRE_BROWSER is set (CI sets
// it, so CI can never skip them).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("KFA_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "browser tests need Chromium: none of chromium, chromium-browser, google-chrome is on PATH " +
		"(install Debian's package with `apt-get install -y chromium`, or set KFA_CHROMIUM to a Chrome binary)"
	if os.Getenv("KFA_REQUIRE_BROWSER") != "" {
		t.Fatal(msg + "; KFA_REQUIRE_BROWSER is set, so this is a failure, not a skip")
	}
	t.Skip(msg)
	return ""
}

// newTab starts a headless Chromium with a fresh profile and returns a tab.
// The flags keep it from reaching out to the network on its own (this
// machine's network is closed, and a test must not depend on one); extra
// adds a test's own (a host mapping, say).
func newTab(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bin := chromium(t)
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// A guard against a wedged browser, not a timing assertion: the steps
	// wait on page events, and ten minutes is far beyond any of them.
	ctx, cancelTimeout := context.WithTimeout(alloc, 10*time.Minute)
	tab, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(func() {
		cancelTab()
		cancelTimeout()
		cancelAlloc()
	})
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start Chromium (%s): %v", bin, err)
	}
	return tab
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// open navigates and returns the HTTP status of the page.
func open(t *testing.T, tab context.Context, u string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(tab, chromedp.Navigate(u))
	must(t, err, "open "+u)
	return resp.Status
}

// follow runs steps that navigate (a click, a submit) and returns the new
// page's HTTP status.
func follow(t *testing.T, tab context.Context, what string, steps ...chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(tab, steps...)
	must(t, err, what)
	return resp.Status
}

func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
	must(t, err, "text of "+sel)
	return s
}

func eval[T any](t *testing.T, tab context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](js))
	must(t, err, "evaluate "+js)
	return v
}

// TestBrowser drives the web view in headless Chromium: a person opens the
// home page, searches, opens a discussion, signs in, replies, sees the
// reply and the answered status, and signs out. Scripts in a question and
// in a reply show as text and never run; a form without its CSRF token is
// refused; the token never lands in a URL or in the history. Screenshots
// at 360 and 1280 pixels are written and checked for a real render.
func TestBrowser(t *testing.T) {
	tab := newTab(t)
	f := newWebFixture(t, nil)
	h := f.h
	const trap = `<script>window.kfaRan = 1; document.title = "pwned"</script>`
	tk := h.ask(h.anon.WithToken(f.alice.Token), "web-x", "Does "+trap+" run here?")
	hostile := discussionOf(t, tk)
	shots := t.TempDir()

	// The home page, in light and dark schemes.
	if st := open(t, tab, h.url+"/"); st != 200 {
		t.Fatalf("home: %d", st)
	}
	if got := text(t, tab, "main h1"); got != "Knowledge for agents" {
		t.Fatalf("home heading %q", got)
	}
	// Keyboard focus is visible: the first Tab reaches the skip link, the
	// next ones the header's links, each with an outline.
	for i, want := range []string{"Skip to the content", "kfa knowledge for agents", "Open questions"} {
		must(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Tab)), "press Tab")
		got := eval[string](t, tab, `(e => e.textContent.trim() + "|" + getComputedStyle(e).outlineStyle + " " + getComputedStyle(e).outlineWidth)(document.activeElement)`)
		if got != want+"|solid 3px" {
			t.Fatalf("Tab %d focuses %q, want %q with a 3px outline", i+1, got, want)
		}
	}
	must(t, chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`)), "blur")
	screenshot(t, tab, shots, "home-1280", 1280, false)
	screenshot(t, tab, shots, "home-1280-dark", 1280, true)
	screenshot(t, tab, shots, "home-360", 360, false)

	// Search from the box.
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("q"), "bbolt open times out")), "type a query")
	if st := follow(t, tab, "search", chromedp.Submit(chromedp.ID("q"))); st != 200 {
		t.Fatalf("search: %d", st)
	}
	if loc := eval[string](t, tab, "location.pathname + location.search"); !strings.HasPrefix(loc, "/search?q=bbolt+open+times+out") {
		t.Fatalf("search went to %s", loc)
	}
	if got := text(t, tab, "ol.items a.item-title"); !strings.Contains(got, "bbolt Open times out") {
		t.Fatalf("first result %q", got)
	}
	screenshot(t, tab, shots, "search-1280", 1280, false)

	// Open the hostile discussion from the list: its script is text.
	open(t, tab, h.url+"/discussions?status=open")
	if st := follow(t, tab, "open the discussion", chromedp.Click(chromedp.CSS(`a[href="/discussions/`+hostile+`"]`))); st != 200 {
		t.Fatalf("discussion: %d", st)
	}
	if got := text(t, tab, "#question-h"); !strings.Contains(got, trap) {
		t.Fatalf("the question shows %q, want the script as text", got)
	}
	noScriptRan(t, tab)

	// Sign in from the discussion's link; the form posts, and the browser
	// comes back to the discussion.
	if st := follow(t, tab, "go to sign in", chromedp.Click(chromedp.CSS(`.answer a[href^="/login"]`))); st != 200 {
		t.Fatalf("sign-in page: %d", st)
	}
	if m := eval[string](t, tab, `document.querySelector("form.login").method`); m != "post" {
		t.Fatalf("the sign-in form's method is %q", m)
	}
	screenshot(t, tab, shots, "login-360", 360, false)
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("token"), f.bob.Token)), "type the token")
	if st := follow(t, tab, "sign in", chromedp.Click(chromedp.CSS("form.login button"))); st != 200 {
		t.Fatalf("after sign-in: %d", st)
	}
	if loc := eval[string](t, tab, "location.pathname"); loc != "/discussions/"+hostile {
		t.Fatalf("after sign-in the browser is at %s", loc)
	}
	if who := text(t, tab, ".signed-in strong"); who != "bob" {
		t.Fatalf("signed in as %q", who)
	}
	tokenNotInHistory(t, tab, f.bob.Token)
	if c := eval[string](t, tab, "document.cookie"); c != "" {
		t.Fatalf("page script can read cookies %q: they must be HttpOnly", c)
	}

	// Reply, with a script in it; see it as text and the status answered.
	reply := `<script>window.kfaRan = 2</script> Only one process may open the file; set Options.Timeout.`
	must(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("body"), reply)), "type the reply")
	if st := follow(t, tab, "post the reply", chromedp.Click(chromedp.CSS("form.reply button"))); st != 200 {
		t.Fatalf("after the reply: %d", st)
	}
	if got := text(t, tab, "ol.replies li .body"); got != reply {
		t.Fatalf("the reply shows %q, want %q", got, reply)
	}
	if got := text(t, tab, "article.question .badge"); got != "Answered" {
		t.Fatalf("status badge %q", got)
	}
	if n := eval[int](t, tab, "window.history.length"); n < 1 {
		t.Fatalf("history length %d", n)
	}
	noScriptRan(t, tab)
	screenshot(t, tab, shots, "discussion-1280", 1280, false)
	screenshot(t, tab, shots, "discussion-360", 360, false)
	screenshot(t, tab, shots, "discussion-360-dark", 360, true)

	// A form post without its CSRF token is refused, and stores nothing.
	before := h.digest()
	st := follow(t, tab, "post without the token", chromedp.Evaluate[chromedp.Void](`
		document.querySelector("form.reply input[name=csrf]").remove();
		document.querySelector("#body").value = "forged";
		document.querySelector("form.reply").submit();`))
	if st != 403 || !strings.Contains(text(t, tab, "main h1"), "Form expired") {
		t.Fatalf("a reply without the CSRF token: %d %q", st, text(t, tab, "main"))
	}
	if h.digest() != before {
		t.Fatal("the refused form changed the store")
	}
	d, err := h.anon.Discussion(bg(), hostile)
	if err != nil || len(d.Replies) != 1 || d.Status != "answered" {
		t.Fatalf("discussion after the browser reply: %+v %v", d, err)
	}

	// Sign out.
	open(t, tab, h.url+"/discussions/"+hostile)
	if st := follow(t, tab, "sign out", chromedp.Click(chromedp.CSS(".who form button"))); st != 200 {
		t.Fatalf("after sign-out: %d", st)
	}
	if n := eval[int](t, tab, `document.querySelectorAll(".signed-in").length`); n != 0 {
		t.Fatal("still signed in after signing out")
	}
	if got := text(t, tab, `.who a`); got != "Sign in" {
		t.Fatalf("header after sign-out shows %q", got)
	}
	tokenNotInHistory(t, tab, f.bob.Token)
	t.Logf("screenshots in %s", shots)
}

// noScriptRan checks that no script of user content ran: neither the
// trap's global nor its title change exists, and the page's one script
// element is its own static file.
func noScriptRan(t *testing.T, tab context.Context) {
	t.Helper()
	if ran := eval[bool](t, tab, `typeof window.kfaRan !== "undefined" || document.title === "pwned"`); ran {
		t.Fatal("a script from user content ran")
	}
	if n := eval[int](t, tab, `[...document.scripts].filter(s => !/^\/static\/kfa\.[0-9a-f]+\.js$/.test(new URL(s.src || "x:", location).pathname)).length`); n != 0 {
		t.Fatalf("the page has %d script elements besides its own static script", n)
	}
}

// tokenNotInHistory checks every history entry and the current URL for the
// agent token.
func tokenNotInHistory(t *testing.T, tab context.Context, token string) {
	t.Helper()
	hist, err := chromedp.Run(tab, func(ctx context.Context, tg *chromedp.Target) (cdppage.GetNavigationHistoryResult, error) {
		return cdp.Call(ctx, tg, cdppage.GetNavigationHistory, cdp.Empty{})
	})
	must(t, err, "read the navigation history")
	if len(hist.Entries) < 3 {
		t.Fatalf("history has %d entries; the test expected a few pages", len(hist.Entries))
	}
	for _, e := range hist.Entries {
		u, _ := url.QueryUnescape(e.URL)
		if strings.Contains(u, token) || strings.Contains(e.URL, token) || strings.Contains(e.Title, token) {
			t.Fatalf("the token is in the history: %s", e.URL)
		}
	}
}

// screenshot renders the current page at width pixels wide (dark or light
// scheme), writes it as dir/name.png, and checks the render is not blank
// and needs no horizontal scrolling. With KFA_WEB_SCREENSHOTS set, a copy
// goes there too (docs/web.md describes them).
func screenshot(t *testing.T, tab context.Context, dir, name string, width int64, dark bool) {
	t.Helper()
	setView(t, tab, width, dark)
	checkContrast(t, tab, name)
	if sw := eval[int64](t, tab, "document.documentElement.scrollWidth"); sw > width {
		// Name the widest elements that stick out, to say what to fix.
		wide := eval[string](t, tab, fmt.Sprintf(`[...document.querySelectorAll("body *")]
			.filter(e => e.getBoundingClientRect().right > %d)
			.map(e => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).trim().split(/\s+/).join(".") : "") + " " + Math.round(e.getBoundingClientRect().right))
			.slice(0, 6).join(", ")`, width))
		t.Errorf("%s: the page is %d px wide in a %d px viewport (it scrolls sideways): %s", name, sw, width, wide)
	}
	buf, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	must(t, err, "screenshot "+name)
	path := filepath.Join(dir, name+".png")
	must(t, os.WriteFile(path, buf, 0o644), "write "+path)
	if keep := os.Getenv("KFA_WEB_SCREENSHOTS"); keep != "" {
		must(t, os.MkdirAll(keep, 0o755), "make "+keep)
		must(t, os.WriteFile(filepath.Join(keep, name+".png"), buf, 0o644), "copy "+name)
	}
	if err := checkRender(buf, width); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	// Back to the default for the next steps.
	must(t, chromedp.Do(tab, chromedp.EmulateViewport(1280, 900)), "reset the viewport")
}

// setView makes the tab width pixels wide, in the dark or the light
// scheme, and returns the scheme's name.
func setView(t *testing.T, tab context.Context, width int64, dark bool) string {
	t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	must(t, chromedp.Do(tab,
		chromedp.EmulateViewport(width, 900),
		func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			})
			return chromedp.Void{}, err
		},
	), "set the viewport")
	return scheme
}

// checkRender decodes a PNG and checks it is width pixels wide and shows
// something: several colours, and a fair share of pixels that differ from
// the background (text, borders, buttons).
func checkRender(buf []byte, width int64) error {
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		return fmt.Errorf("not a PNG: %w", err)
	}
	b := img.Bounds()
	if int64(b.Dx()) != width {
		return fmt.Errorf("%d px wide, want %d", b.Dx(), width)
	}
	// The pixels by colour, 4 bits a channel. A screenshot decodes to
	// 8-bit RGBA or NRGBA, whose opaque pixels are read straight from its
	// bytes: through At, a full-page screenshot took seconds under the
	// race detector.
	var counts [1 << 12]int
	var pix []byte
	var stride int
	switch m := img.(type) {
	case *image.RGBA:
		pix, stride = m.Pix, m.Stride
	case *image.NRGBA:
		pix, stride = m.Pix, m.Stride
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if pix != nil {
				i := (y-b.Min.Y)*stride + (x-b.Min.X)*4
				if p := pix[i : i+4 : i+4]; p[3] == 0xff {
					counts[int(p[0]>>4)<<8|int(p[1]>>4)<<4|int(p[2]>>4)]++
					continue
				}
			}
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[int(r>>12)<<8|int(g>>12)<<4|int(bl>>12)]++
		}
	}
	colours, most := 0, 0
	for _, n := range counts {
		if n > 0 {
			colours++
		}
		most = max(most, n)
	}
	total := b.Dx() * b.Dy()
	if colours < 8 || float64(total-most) < 0.01*float64(total) {
		return fmt.Errorf("looks blank: %d colours, %d of %d pixels differ from the background", colours, total-most, total)
	}
	return nil
}

// textColors lists, for every rendered element with text of its own, its
// text colour and the first opaque background behind it.
const textColors = `[...document.body.querySelectorAll("*")]
	.filter(e => e.getClientRects().length && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
	.map(e => {
		let bg = "";
		for (let a = e; a && !bg; a = a.parentElement) {
			const c = getComputedStyle(a).backgroundColor;
			if (c && c !== "transparent" && !/rgba\(.*, 0\)$/.test(c)) bg = c;
		}
		return [e.tagName.toLowerCase() + (e.className ? "." + e.className : ""), getComputedStyle(e).color, bg || "rgb(255, 255, 255)"];
	})`

// checkContrast checks every text on the page against WCAG AA: a contrast
// ratio of at least 4.5 to its background.
func checkContrast(t *testing.T, tab context.Context, name string) {
	t.Helper()
	seen := 0
	for _, c := range eval[[][3]string](t, tab, textColors) {
		fg, err1 := parseRGB(c[1])
		bg, err2 := parseRGB(c[2])
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %s: colours %q on %q", name, c[0], c[1], c[2])
			continue
		}
		seen++
		if r := contrast(fg, bg); r < 4.5 {
			t.Errorf("%s: %s has contrast %.2f (%s on %s), AA needs 4.5", name, c[0], r, c[1], c[2])
		}
	}
	if seen < 10 {
		t.Errorf("%s: only %d texts checked for contrast", name, seen)
	}
}

// parseRGB reads a computed colour, "rgb(r, g, b)" or "rgba(r, g, b, 1)".
func parseRGB(s string) ([3]float64, error) {
	var c [3]float64
	inner, ok := strings.CutPrefix(s, "rgb(")
	if !ok {
		inner, ok = strings.CutPrefix(s, "rgba(")
	}
	inner, ok2 := strings.CutSuffix(inner, ")")
	parts := strings.Split(inner, ",")
	if !ok || !ok2 || len(parts) < 3 || (len(parts) == 4 && strings.TrimSpace(parts[3]) != "1") {
		return c, fmt.Errorf("not an opaque rgb colour: %q", s)
	}
	for i := range 3 {
		if _, err := fmt.Sscanf(strings.TrimSpace(parts[i]), "%g", &c[i]); err != nil {
			return c, err
		}
	}
	return c, nil
}

// contrast is the WCAG 2 contrast ratio of two sRGB colours.
func contrast(a, b [3]float64) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(c [3]float64) float64 {
	var l [3]float64
	for i, v := range c {
		v /= 255
		if v <= 0.04045 {
			l[i] = v / 12.92
		} else {
			l[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
}
