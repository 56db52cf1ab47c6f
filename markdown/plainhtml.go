package markdown

import (
	"html/template"
	"net/url"
	"regexp"
	"strings"
)

// urlPattern finds http(s) URLs in plain text. What ends a URL here is
// whitespace, or a character that cannot appear unescaped in one.
var urlPattern = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"'\x60{}|\\^\x00-\x1f\x7f]+`)

// paragraphBreak is a blank line, possibly holding spaces.
var paragraphBreak = regexp.MustCompile(`\n[ \t]*\n`)

// PlainHTML shows user text as HTML: every character escaped, blank
// lines starting paragraphs, single newlines kept as line breaks, and
// http(s) URLs made into links. Nothing else of the text becomes markup:
// no HTML, no markdown, no images.
func PlainHTML(s string) template.HTML {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	var b strings.Builder
	for _, para := range paragraphBreak.Split(s, -1) {
		para = strings.Trim(para, "\n")
		if strings.TrimSpace(para) == "" {
			continue
		}
		b.WriteString("<p>")
		for i, line := range strings.Split(para, "\n") {
			if i > 0 {
				b.WriteString("<br>\n")
			}
			linkify(&b, line)
		}
		b.WriteString("</p>\n")
	}
	// Every byte of s went through HTMLEscapeString or a checked URL.
	return template.HTML(b.String())
}

// linkify writes line escaped, with its URLs as links.
func linkify(b *strings.Builder, line string) {
	rest := line
	for {
		loc := urlPattern.FindStringIndex(rest)
		if loc == nil {
			b.WriteString(template.HTMLEscapeString(rest))
			return
		}
		b.WriteString(template.HTMLEscapeString(rest[:loc[0]]))
		raw, tail := trimURL(rest[loc[0]:loc[1]])
		if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			esc := template.HTMLEscapeString(raw)
			b.WriteString(`<a href="` + esc + `" rel="` + LinkRel + `">` + esc + `</a>`)
		} else {
			b.WriteString(template.HTMLEscapeString(raw))
		}
		b.WriteString(template.HTMLEscapeString(tail))
		rest = rest[loc[1]:]
	}
}

// trimURL splits the punctuation that ends a sentence off a URL found in
// text ("see https://x.org/a." links https://x.org/a). A closing
// parenthesis stays when the URL opened one (https://en.wikipedia.org/wiki/Go_(game)).
//
// The brackets are counted once and the counts kept as the end moves, so
// a URL of a million ')' costs a million steps, not their square.
func trimURL(u string) (link, tail string) {
	opens, closes := strings.Count(u, "("), strings.Count(u, ")")
	squareOpens, squareCloses := strings.Count(u, "["), strings.Count(u, "]")
	end := len(u)
	for end > 0 {
		switch c := u[end-1]; {
		case strings.IndexByte(".,;:!?*", c) >= 0:
		case c == ')' && opens < closes:
			closes--
		case c == ']' && squareOpens < squareCloses:
			squareCloses--
		default:
			return u[:end], u[end:]
		}
		end--
	}
	return u[:end], u[end:]
}
