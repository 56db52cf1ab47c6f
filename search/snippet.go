package search

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetLen is the length, in characters, of a snippet made from the
// start of a body when no passage matched.
const snippetLen = 200

// Highlighter marks. bleve's html highlighter escapes the text and wraps
// matches in these; plainSnippet removes them and unescapes, which gives
// back the original characters exactly.
const (
	markOpen  = "<mark>"
	markClose = "</mark>"
)

// ellipsis is what the highlighter puts where it cut the text.
const ellipsis = "…"

// plainSnippet turns a highlighted fragment into plain text: no markup,
// whitespace runs (newlines included) folded into single spaces, and the
// words the fragment cut in half dropped.
func plainSnippet(fragment string) string {
	s := strings.ReplaceAll(fragment, markOpen, "")
	s = strings.ReplaceAll(s, markClose, "")
	s = fold(html.UnescapeString(s))
	if rest, ok := strings.CutPrefix(s, ellipsis); ok {
		if i := strings.IndexByte(rest, ' '); i >= 0 && i < len(rest)/2 {
			rest = rest[i+1:]
		}
		s = ellipsis + rest
	}
	if rest, ok := strings.CutSuffix(s, ellipsis); ok {
		if i := strings.LastIndexByte(rest, ' '); i > len(rest)/2 {
			rest = rest[:i]
		}
		s = rest + ellipsis
	}
	return s
}

// leadSnippet is the first snippetLen characters of body, cut at a word
// boundary.
func leadSnippet(body string) string {
	s := fold(body)
	if utf8.RuneCountInString(s) <= snippetLen {
		return s
	}
	r := []rune(s)[:snippetLen]
	cut := len(r)
	for i := len(r) - 1; i > snippetLen/2; i-- {
		if unicode.IsSpace(r[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(r[:cut]), unicode.IsSpace) + "…"
}

// fold collapses whitespace and drops control characters, so a snippet
// is one line of text.
func fold(s string) string {
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
