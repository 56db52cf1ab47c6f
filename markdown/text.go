package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text is body as plain text: what a reader of the rendered page reads,
// without Markdown's syntax (fences, backticks, emphasis marks, link
// addresses), one line per block. Search indexes it, and snippets and
// feed summaries are cut from it (Lead), so no surface shows ```go.
// It is made from the rendered HTML, under the same budget as HTML.
func Text(body string) string {
	h, _ := render(body, nil)
	return htmlText(string(h))
}

// htmlText is the text of the rendered fragment h: tags dropped, entities
// decoded, a newline where a block ends and a space between table cells.
func htmlText(h string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(h))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.P, atom.Br, atom.Li, atom.Pre, atom.Blockquote, atom.Tr, atom.Hr, atom.Ul, atom.Ol, atom.Table:
				b.WriteByte('\n')
			case atom.Td, atom.Th:
				b.WriteByte(' ')
			}
		}
	}
}

// Lead is the first n characters of plain text, as one line (Fold), cut
// at a word boundary and marked with "…" when cut: a snippet or a feed
// summary.
func Lead(plain string, n int) string {
	s := Fold(plain)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := len(r)
	for i := len(r) - 1; i > n/2; i-- {
		if unicode.IsSpace(r[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(r[:cut]), unicode.IsSpace) + "…"
}

// Fold collapses whitespace (newlines included) into single spaces and
// drops control characters, so text is one line.
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
