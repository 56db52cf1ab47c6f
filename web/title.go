package web

import (
	"html/template"
	"strings"

	"github.com/kfa-project/kfa/markdown"
)

// Bodies (questions, replies, records) are Markdown, rendered by the
// handler's markdown.Renderer to a safe subset within a per-body budget;
// text that is not Markdown (names, notes) is shown by formatText.
var formatText = markdown.PlainHTML

// formatTitle renders a one-line title: its code spans (`...`) as <code>,
// everything else as escaped text, since a title sits inside a heading or
// a link and takes no other Markdown. A lone backtick stays a backtick.
func formatTitle(s string) template.HTML {
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open+1:], '`')
		if end <= 0 { // no closing backtick, or an empty span
			break
		}
		b.WriteString(template.HTMLEscapeString(s[:open]))
		b.WriteString("<code>")
		b.WriteString(template.HTMLEscapeString(s[open+1 : open+1+end]))
		b.WriteString("</code>")
		s = s[open+1+end+1:]
	}
	b.WriteString(template.HTMLEscapeString(s))
	return template.HTML(b.String())
}
