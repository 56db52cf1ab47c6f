package search

import (
	"html"
	"strings"

	"github.com/kfa-project/kfa/markdown"
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
	s = markdown.Fold(html.UnescapeString(s))
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

// leadSnippet is the first snippetLen characters of plain text (a body
// as markdown.Text made it), cut at a word boundary.
func leadSnippet(plain string) string { return markdown.Lead(plain, snippetLen) }
