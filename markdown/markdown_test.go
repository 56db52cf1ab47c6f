package markdown

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

func TestFormatMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // substrings of the HTML
		not      []string // what must not appear
	}{
		{name: "paragraphs and line breaks", in: "first line\nsecond line\n\nnext paragraph",
			want: []string{"<p>first line<br>\nsecond line</p>", "<p>next paragraph</p>"}},
		{name: "emphasis and inline code", in: "*em*, **strong** and `a < b`",
			want: []string{"<em>em</em>", "<strong>strong</strong>", "<code>a &lt; b</code>"}},
		{name: "a fenced code block", in: "```go\nif a < b {\n\tfmt.Println(\"<b>\")\n}\n```",
			want: []string{`<pre class="code" tabindex="0"><code class="language-go"><span class="hl-k">if</span> a &lt; b {`,
				`<span class="hl-s">&quot;&lt;b&gt;&quot;</span>`}},
		{name: "a fence in an unknown language is plain", in: "```brainfuck\n+[<b>]\n```",
			want: []string{`<pre class="code" tabindex="0"><code>+[&lt;b&gt;]`}, not: []string{"span", "brainfuck"}},
		{name: "an indented code block", in: "    x := <y>\n",
			want: []string{`<pre class="code" tabindex="0"><code>x := &lt;y&gt;`}},
		{name: "a table", in: "| a | b |\n|:--|--:|\n| 1 | `2` |",
			want: []string{`<table tabindex="0">`, `<th align="left">a</th>`, `<td align="right"><code>2</code></td>`}},
		{name: "strikethrough", in: "~~old~~ new", want: []string{"<del>old</del> new"}},
		{name: "a task list", in: "- [x] done\n- [ ] to do",
			want: []string{`<input type="checkbox" class="task" checked disabled aria-label="done"> done`,
				`<input type="checkbox" class="task" disabled aria-label="to do"> to do`}},
		{name: "a bare www address is an http link, as on GitHub", in: "see www.example.com",
			want: []string{`<a href="http://www.example.com" rel="nofollow ugc noopener">www.example.com</a>`}},
		{name: "lists", in: "- one\n- two\n\n3. three\n4. four",
			want: []string{"<ul>\n<li>one</li>", `<ol start="3">`, "<li>four</li>"}},
		{name: "an http link", in: "[the docs](https://go.dev/doc/?a=1&b=2)",
			want: []string{`<a href="https://go.dev/doc/?a=1&amp;b=2" rel="nofollow ugc noopener">the docs</a>`}},
		{name: "a bare URL", in: "see https://pkg.go.dev/net/http.",
			want: []string{`<a href="https://pkg.go.dev/net/http" rel="nofollow ugc noopener">https://pkg.go.dev/net/http</a>.`}},
		{name: "a javascript: link is its text", in: "[click me](javascript:alert(1))",
			want: []string{"<p>click me</p>"}, not: []string{"href", "javascript"}},
		{name: "a data: link is its text", in: "[x](data:text/html;base64,PHNjcmlwdD4=)", want: []string{"<p>x</p>"}, not: []string{"href"}},
		{name: "relative and protocol-relative links are text", in: "[a](/admin) [b](//evil.example)",
			want: []string{"<p>a b</p>"}, not: []string{"href"}},
		{name: "a script tag is text", in: "<script>alert(1)</script>",
			want: []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}, not: []string{"<script"}},
		{name: "an onerror attribute is text", in: `before <img src=x onerror="alert(1)"> after`,
			want: []string{"&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"}, not: []string{"<img"}},
		{name: "an image is its alt text", in: "![a *diagram*](https://example.com/x.png)",
			want: []string{"<p>a diagram</p>"}, not: []string{"<img", "example.com"}},
		{name: "a heading is a bold paragraph", in: "# Big\ntext",
			want: []string{"<p><strong>Big</strong></p>"}, not: []string{"<h1"}},
		{name: "an e-mail address is text", in: "write to a@example.com", want: []string{"write to a@example.com"}, not: []string{"mailto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(testHTML(tc.in))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("%q in\n%s", n, got)
				}
			}
			checkSafe(t, tc.in, got)
		})
	}
}

// testHTML renders s with a renderer of its own, keeping nothing.
func testHTML(s string) string {
	// No budget a loaded machine could run out of: what is highlighted
	// must not depend on the machine's speed.
	return string(NewRenderer(Options{CacheBytes: -1, HighlightBudget: time.Hour}).HTML(s))
}

// allowed are the elements and, for each, the attributes the subset
// writes.
var allowed = map[string]map[string]bool{
	"p": {}, "br": {}, "em": {}, "strong": {}, "code": {"class": true}, "pre": {"class": true, "tabindex": true}, "ul": {}, "ol": {"start": true}, "li": {},
	"blockquote": {}, "hr": {}, "a": {"href": true, "rel": true}, "del": {}, "span": {"class": true},
	"table": {"tabindex": true}, "thead": {}, "tbody": {}, "tr": {}, "th": {"align": true}, "td": {"align": true},
	"input": {"type": true, "class": true, "checked": true, "disabled": true, "aria-label": true},
}

// checkSafe fails t when out holds an element or attribute outside the
// subset, or a link that is not http(s) with the rel it must have.
func checkSafe(t testing.TB, in, out string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			attrs, ok := allowed[tok.Data]
			if !ok {
				t.Fatalf("element <%s> from %q:\n%s", tok.Data, in, out)
			}
			for _, a := range tok.Attr {
				if !attrs[a.Key] {
					t.Fatalf("attribute %s on <%s> from %q:\n%s", a.Key, tok.Data, in, out)
				}
				switch a.Key {
				case "href":
					u, err := url.Parse(a.Val)
					if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
						t.Fatalf("link to %q from %q:\n%s", a.Val, in, out)
					}
				case "rel":
					if a.Val != LinkRel {
						t.Fatalf("rel %q from %q", a.Val, in)
					}
				case "class":
					if !strings.HasPrefix(a.Val, "language-") && !strings.HasPrefix(a.Val, "hl-") && a.Val != "code" && a.Val != "task" {
						t.Fatalf("class %q from %q", a.Val, in)
					}
				case "type":
					if a.Val != "checkbox" {
						t.Fatalf("input type %q from %q", a.Val, in)
					}
				}
			}
		}
	}
}

// FuzzFormatMarkdown: whatever an agent writes, the page gets only the
// subset's elements and attributes, and links to http(s) only.
func FuzzFormatMarkdown(f *testing.F) {
	for _, s := range []string{
		"<script>alert(1)</script>", "[x](javascript:alert(1))", "![x](https://e/i.png)", "```\n<b>\n```",
		"<img src=x onerror=alert(1)>", "[a](<javascript:x>)", "<a href=\"https://x\" onclick=\"y\">x</a>",
		"*a* **b** `c` https://x.y/z www.a.b", "- a\n  - b\n\n> q\n\n---", "[x][r]\n\n[r]: jAvAsCrIpT:alert(1)",
		"<https://a.b/c> <javascript:alert(1)>", "&lt;script&gt;", "[x](https://a.b/\" onmouseover=\"alert(1))",
		"| a | b |\n|---|---|\n| <b> | [x](javascript:y) |", "- [x] <i>\n- [ ] ~~s~~", "```go\n\"</span><script>\"\n```",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSafe(t, s, string(testHTML(s)))
	})
}
