package markdown

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// LinkRel is the rel of every link to somewhere else: user content earns
// no ranking, and the opened page gets no handle on this one.
const LinkRel = "nofollow ugc noopener"

// safeNodes renders the node kinds whose default rendering the subset
// narrows. goldmark renders the rest with its safe defaults:
//
//   - raw HTML, inline or as a block, is shown as the text it is (goldmark
//     would drop it silently; a question about a <script> tag should show
//     the tag);
//   - an image is its alt text: no request leaves the page for content;
//   - a link whose address is not absolute http(s) is its text alone
//     (javascript:, data:, relative and protocol-relative addresses);
//   - a heading is a bold paragraph: an answer does not outrank the page's
//     own headings;
//   - a task-list box is a disabled checkbox with a label, never a form
//     control a reader can change.
//
// No attribute is ever copied from the source (goldmark's attribute
// syntax is not enabled), so nothing like onerror= can reach the page,
// and the page's CSP allows no script in any case.
type safeNodes struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (safeNodes) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindImage, renderImage)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindHeading, renderHeading)
	reg.Register(east.KindTaskCheckBox, renderTaskCheckBox)
}

// webLink returns dest escaped for an href when it is an absolute http(s)
// address.
func webLink(dest []byte) ([]byte, bool) {
	u, err := url.Parse(string(dest))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return util.EscapeHTML(util.URLEscape(dest, true)), true
}

func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href, ok := webLink(n.Destination)
	if !ok {
		return ast.WalkContinue, nil // the text alone
	}
	if entering {
		_, _ = w.WriteString(`<a href="`)
		_, _ = w.Write(href)
		_, _ = w.WriteString(`" rel="` + LinkRel + `">`)
	} else {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := util.EscapeHTML(n.Label(source))
	href, ok := webLink(n.URL(source))
	if n.AutoLinkType != ast.AutoLinkURL || !ok {
		_, _ = w.Write(label)
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(href)
	_, _ = w.WriteString(`" rel="` + LinkRel + `">`)
	_, _ = w.Write(label)
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// renderImage writes the image's alt text, escaped.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	var alt strings.Builder
	_ = ast.Walk(node, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*ast.Text); ok && entering {
			alt.Write(t.Segment.Value(source))
		}
		return ast.WalkContinue, nil
	})
	_, _ = w.Write(util.EscapeHTML([]byte(alt.String())))
	return ast.WalkSkipChildren, nil
}

// renderRawHTML writes inline HTML as the text it is.
func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock writes a block of HTML as a paragraph of the text it
// is, its lines kept.
func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var lines [][]byte
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		lines = append(lines, bytes.TrimRight(seg.Value(source), "\r\n"))
	}
	if n.HasClosure() {
		lines = append(lines, bytes.TrimRight(n.ClosureLine.Value(source), "\r\n"))
	}
	_, _ = w.WriteString("<p>")
	for i, l := range lines {
		if i > 0 {
			_, _ = w.WriteString("<br>\n")
		}
		_, _ = w.Write(util.EscapeHTML(l))
	}
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// renderHeading writes a heading as a bold paragraph.
func renderHeading(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<p><strong>")
	} else {
		_, _ = w.WriteString("</strong></p>\n")
	}
	return ast.WalkContinue, nil
}

// renderTaskCheckBox writes a task's box, read-only, named for screen
// readers (a form control needs a name).
func renderTaskCheckBox(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	if node.(*east.TaskCheckBox).IsChecked {
		_, _ = w.WriteString(`<input type="checkbox" class="task" checked disabled aria-label="done"> `)
	} else {
		_, _ = w.WriteString(`<input type="checkbox" class="task" disabled aria-label="to do"> `)
	}
	return ast.WalkContinue, nil
}
