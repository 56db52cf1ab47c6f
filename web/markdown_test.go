package web

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
			want: []string{`<pre><code class="language-go">if a &lt; b {`, "fmt.Println(&quot;&lt;b&gt;&quot;)"}},
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
			got := string(formatMarkdown(tc.in))
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

// allowed are the elements and, for each, the attributes the subset
// writes.
var allowed = map[string]map[string]bool{
	"p": {}, "br": {}, "em": {}, "strong": {}, "code": {"class": true}, "pre": {}, "ul": {}, "ol": {"start": true}, "li": {},
	"blockquote": {}, "hr": {}, "a": {"href": true, "rel": true},
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
					if a.Val != linkRel {
						t.Fatalf("rel %q from %q", a.Val, in)
					}
				case "class":
					if !strings.HasPrefix(a.Val, "language-") {
						t.Fatalf("class %q from %q", a.Val, in)
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
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSafe(t, s, string(formatMarkdown(s)))
	})
}

func TestRelativeTime(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"}, {59 * time.Second, "just now"}, {-30 * time.Second, "just now"},
		{time.Minute, "1 min ago"}, {59 * time.Minute, "59 min ago"}, {time.Hour, "1 h ago"}, {23 * time.Hour, "23 h ago"},
		{30 * time.Hour, "yesterday"}, {3 * 24 * time.Hour, "3 days ago"}, {45 * 24 * time.Hour, "1 month ago"},
		{100 * 24 * time.Hour, "3 months ago"}, {800 * 24 * time.Hour, "2 years ago"}, {-48 * time.Hour, "on 4 Dec 2026"},
	} {
		if got := relativeTime(now.Add(-tc.ago), now); got != tc.want {
			t.Errorf("%s ago: %q, want %q", tc.ago, got, tc.want)
		}
	}
	got := string(timeElement(now.Add(-5*time.Minute), now))
	want := `<time datetime="2026-12-02T10:25:00.000Z" title="2 Dec 2026, 10:25 UTC">5 min ago</time>`
	if got != want {
		t.Fatalf("time element:\n%s\nwant\n%s", got, want)
	}
}

func TestFormatTitle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Why does bbolt Open hang?", "Why does bbolt Open hang?"},
		{"It hangs in `bolt.Open`, why?", "It hangs in <code>bolt.Open</code>, why?"},
		{"`a` and `b`", "<code>a</code> and <code>b</code>"},
		{"a `<script>` tag & `x<y`", "a <code>&lt;script&gt;</code> tag &amp; <code>x&lt;y</code>"},
		{"a lone ` backtick", "a lone ` backtick"},
		{"an empty `` span", "an empty `` span"},
		{"<b>bold</b> is text", "&lt;b&gt;bold&lt;/b&gt; is text"},
		{"*not emphasis*", "*not emphasis*"},
	} {
		if got := string(formatTitle(tc.in)); got != tc.want {
			t.Errorf("formatTitle(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
