package markdown

import (
	"bytes"
	"html/template"
	"time"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxLen bounds the text parsed as Markdown, in bytes: the stores bound
// what agents send (20,000 characters for a question or a reply, 50,000
// for a record), and anything longer is shown as plain text.
const MaxLen = 256 << 10

// Defaults of Options.
const (
	DefaultHighlightBudget = 2 * time.Millisecond
	DefaultCacheBytes      = 16 << 20
)

// bodyParser parses every body, and bodyRenderer renders it; neither
// holds state between calls.
var (
	bodyParser   = boundedParser()
	bodyRenderer = renderer.NewRenderer(
		renderer.WithNodeRenderers(
			util.Prioritized(html.NewRenderer(html.WithHardWraps()), 1000), // a single newline is a line break, as agents write
			util.Prioritized(extension.NewTableHTMLRenderer(
				// An align attribute, not a style one: the pages' CSP allows no inline style.
				extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)), 500),
			util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500),
			util.Prioritized(safeNodes{}, 100),
			util.Prioritized(codeBlocks{}, 100),
		),
	)
)

// Options configure a Renderer.
type Options struct {
	// HighlightBudget is how long one body's code may be highlighted
	// for, from the first code block (default DefaultHighlightBudget);
	// past it, code is shown plain.
	HighlightBudget time.Duration
	// CacheBytes bounds the rendered pages kept, by the size of their
	// HTML (default DefaultCacheBytes; negative: none kept).
	CacheBytes int
	// Now is the clock the highlight budget is read from; time.Now when
	// nil.
	Now func() time.Time
}

// Renderer renders bodies for pages. A body is rendered once and its HTML
// kept (most recently shown first, within Options.CacheBytes), so showing
// a page again costs no parsing and no highlighting. It is safe for
// concurrent use.
type Renderer struct {
	o     Options
	cache *lru
}

// NewRenderer returns a Renderer with o's settings, defaults filled in.
func NewRenderer(o Options) *Renderer {
	if o.HighlightBudget <= 0 {
		o.HighlightBudget = DefaultHighlightBudget
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Renderer{o: o, cache: newLRU(max(o.CacheBytes, 0))}
}

// HTML renders body as the safe subset of HTML for a page: GitHub's
// Markdown without raw HTML or images, links to http(s) addresses only
// (rel="nofollow ugc noopener"), fenced code in a known language
// highlighted into classes (see languages). A body longer than MaxLen is
// shown as plain text.
func (r *Renderer) HTML(body string) template.HTML {
	k := key('h', body)
	if h, ok := r.cache.get(k); ok {
		return template.HTML(h) // kept under an HTML key: what render made
	}
	hb := &highlightBudget{now: r.o.Now, budget: r.o.HighlightBudget}
	h, _ := render(body, hb)
	// A render the budget cut short is not kept: on a busy moment it may
	// have cut ordinary code, which the next view highlights in full.
	if !hb.out {
		r.cache.put(k, string(h))
	}
	return h
}

// Text is Text(body), kept as HTML is: a feed or an index that reads the
// same bodies again parses each once.
func (r *Renderer) Text(body string) string {
	k := key('t', body)
	if s, ok := r.cache.get(k); ok {
		return s
	}
	s := Text(body)
	r.cache.put(k, s)
	return s
}

// parse parses src under a fresh budget.
func parse(src []byte) (ast.Node, *work) {
	pc := parser.NewContext()
	w := workOf(pc)
	doc := bodyParser.Parse(text.NewReader(src), parser.WithContext(pc))
	return doc, w
}

// render renders body, highlighting code within hb (nil: none), and says
// what it spent of its budget.
func render(body string, hb *highlightBudget) (template.HTML, *work) {
	if len(body) > MaxLen {
		return PlainHTML(body), &work{}
	}
	src := []byte(body)
	doc, w := parse(src)
	if hb != nil {
		doc.SetAttribute(budgetKey, hb)
	}
	var b bytes.Buffer
	if err := bodyRenderer.Render(&b, src, doc); err != nil {
		return PlainHTML(body), w // goldmark fails only on a failing writer; plain text is always safe
	}
	// Every node kind the parser produces is rendered by goldmark's
	// escaping renderers or by safeNodes and codeBlocks.
	return template.HTML(b.String()), w
}
