package markdown

import (
	"strings"
	"testing"
)

func TestFormatText(t *testing.T) {
	const rel = ` rel="nofollow ugc noopener"`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"blank lines only", "\n \n\t\n", ""},
		{"one line", "hello", "<p>hello</p>\n"},
		{"paragraphs and breaks", "a\nb\n\nc\r\n\r\nd", "<p>a<br>\nb</p>\n<p>c</p>\n<p>d</p>\n"},
		{"spaces in the blank line", "a\n  \nb", "<p>a</p>\n<p>b</p>\n"},
		{"markup is text", `<script>alert("x")</script>`, "<p>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</p>\n"},
		{"link", "see https://go.dev/doc", `<p>see <a href="https://go.dev/doc"` + rel + `>https://go.dev/doc</a></p>` + "\n"},
		{"http link", "http://x.test/a", `<p><a href="http://x.test/a"` + rel + `>http://x.test/a</a></p>` + "\n"},
		{"sentence end", "go to https://go.dev.", `<p>go to <a href="https://go.dev"` + rel + `>https://go.dev</a>.</p>` + "\n"},
		{"in parentheses", "(https://go.dev/x)", `<p>(<a href="https://go.dev/x"` + rel + `>https://go.dev/x</a>)</p>` + "\n"},
		{"balanced parentheses", "https://w.test/Go_(game)", `<p><a href="https://w.test/Go_(game)"` + rel + `>https://w.test/Go_(game)</a></p>` + "\n"},
		{"query escaped", "https://x.test/?a=1&b=2", `<p><a href="https://x.test/?a=1&amp;b=2"` + rel + `>https://x.test/?a=1&amp;b=2</a></p>` + "\n"},
		{"quote ends the url", `https://x.test/"onclick="a`, `<p><a href="https://x.test/"` + rel + `>https://x.test/</a>&#34;onclick=&#34;a</p>` + "\n"},
		{"angle bracket ends the url", "https://x.test/<b>", `<p><a href="https://x.test/"` + rel + `>https://x.test/</a>&lt;b&gt;</p>` + "\n"},
		{"javascript is not linked", "javascript:alert(1)", "<p>javascript:alert(1)</p>\n"},
		{"markdown image is text", "![i](https://x.test/i.png)", `<p>![i](<a href="https://x.test/i.png"` + rel + `>https://x.test/i.png</a>)</p>` + "\n"},
		{"scheme without host", "https://", "<p>https://</p>\n"},
		{"only punctuation after the scheme", "https://.", "<p>https://.</p>\n"},
		{"not a word boundary", "xhttps://x.test", "<p>xhttps://x.test</p>\n"},
		{"closing brackets past the opened ones", "(see https://x.test/a_(b)]).", `<p>(see <a href="https://x.test/a_(b)"` + rel + `>https://x.test/a_(b)</a>]).</p>` + "\n"},
		{"upper-case scheme", "HTTPS://X.TEST", `<p><a href="HTTPS://X.TEST"` + rel + `>HTTPS://X.TEST</a></p>` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(PlainHTML(tc.in)); got != tc.want {
				t.Fatalf("PlainHTML(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzFormatText: whatever the text, the only markup in the output is the
// paragraphs, line breaks and links PlainHTML writes, and every link
// goes to an http(s) address.
func FuzzFormatText(f *testing.F) {
	for _, s := range []string{"", "a\n\nb", "<script>x</script>", "https://x.test/a?b=<c>", `"'&<>`, "(https://x.test/(a))."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(PlainHTML(s))
		for rest := out; ; {
			i := strings.IndexByte(rest, '<')
			if i < 0 {
				break
			}
			rest = rest[i:]
			const open, tail = `<a href="`, `" rel="` + LinkRel + `"`
			switch {
			case strings.HasPrefix(rest, "<p>"), strings.HasPrefix(rest, "</p>"), strings.HasPrefix(rest, "<br>"), strings.HasPrefix(rest, "</a>"):
			case strings.HasPrefix(rest, open):
				end := strings.IndexByte(rest, '>')
				if end < 0 || !strings.HasSuffix(rest[:end], tail) {
					t.Fatalf("bad link markup in %q", out)
				}
				href := strings.ToLower(rest[len(open) : end-len(tail)])
				if strings.ContainsAny(href, `"<>`) || !strings.HasPrefix(href, "http://") && !strings.HasPrefix(href, "https://") {
					t.Fatalf("link to %q in %q", href, out)
				}
			default:
				t.Fatalf("unexpected markup %.20q in %q (input %q)", rest, out, s)
			}
			rest = rest[1:]
		}
	})
}
