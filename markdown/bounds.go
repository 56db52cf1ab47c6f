package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The budget of one body. goldmark is linear on ordinary text, but a few
// of its steps cost more than the length of what triggers them: opening a
// container rescans the line from its start (nested quotes and lists: the
// square of the nesting), the link parser looks back over the paragraph
// and forward to the end of the line at every ']' (the square of the
// paragraph), and a table row is padded to the header's width (rows times
// columns, from a few bytes each). Each such step is charged here, and a
// step the budget cannot pay is not taken: the text it would have parsed
// stays text. Ordinary writing never comes near these figures.
const (
	// MaxDepth is how deep quotes and lists may nest; a marker past it is
	// text.
	MaxDepth = 16
	// MaxLinkWork bounds, in bytes, what the link parser may look at in
	// one body: each ']' (and each '[' or '![') is charged the length of
	// the paragraph it sits in. Past it, brackets are text.
	MaxLinkWork = 2 << 20
	// MaxInlineMarks bounds the inline marks of one body parsed as
	// Markdown (emphasis, code spans, links, images, raw HTML,
	// strikethrough: each start of one tried); past it, marks are text.
	// goldmark is linear in them, but each costs a node or a delimiter: a
	// body of nothing but marks costs ten times a body of words.
	MaxInlineMarks = 4096
	// MaxTableCells bounds the cells of the tables of one body, padding
	// included; a table past it stays a paragraph.
	MaxTableCells = 5000
)

// work is what one body spent of its budget, and what it was refused.
// Tests read it to check each bound holds on the worst input.
type work struct {
	marks         int // charged to MaxInlineMarks
	marksRefused  int
	linkBytes     int      // charged to MaxLinkWork
	linkRefused   int      // bracket steps not taken
	lenOf         ast.Node // the block whose length lenIs is
	lenIs         int
	depthRefused  int // containers not opened past MaxDepth
	cells         int // table cells charged
	tablesRefused int
	escapedPipes  int // \| in the tables built so far
}

var workKey = parser.NewContextKey()

// workOf is the budget of the body pc parses.
func workOf(pc parser.Context) *work {
	if w, ok := pc.Get(workKey).(*work); ok {
		return w
	}
	w := &work{}
	pc.Set(workKey, w)
	return w
}

// boundedParser is goldmark's CommonMark parser with GitHub's tables,
// strikethrough, task lists and bare links, each step that can cost more
// than its input wrapped in its bound.
func boundedParser() parser.Parser {
	var blocks []util.PrioritizedValue
	for _, v := range parser.DefaultBlockParsers() {
		if bp := v.Value.(parser.BlockParser); isContainer(bp) {
			v.Value = nestingBound{bp}
		}
		blocks = append(blocks, v)
	}
	var inlines []util.PrioritizedValue
	for _, v := range append(parser.DefaultInlineParsers(), gfmMarks()...) {
		ip := v.Value.(parser.InlineParser)
		if bytes.Contains(ip.Trigger(), []byte("[")) {
			ip = linkBound{ip}
		}
		v.Value = markBound{ip}
		inlines = append(inlines, v)
	}
	inlines = append(inlines, gfmInlines()...)
	return parser.NewParser(
		parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(), tableTransformers()...)...),
		parser.WithASTTransformers(tableASTTransformers()...),
	)
}

// isContainer reports whether bp opens blocks that hold blocks and can
// nest on one line (quotes, lists and their items).
func isContainer(bp parser.BlockParser) bool {
	t := string(bp.Trigger())
	return t == ">" || bytes.ContainsAny(bp.Trigger(), "-*+") && bytes.ContainsAny(bp.Trigger(), "0123456789")
}

// nestingBound refuses to open a container past MaxDepth.
type nestingBound struct{ parser.BlockParser }

// Open implements parser.BlockParser.
func (b nestingBound) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	// A list item opens inside its list, which was counted when it opened.
	if parent.Kind() != ast.KindList && depth(parent) >= MaxDepth {
		workOf(pc).depthRefused++
		return nil, parser.NoChildren
	}
	return b.BlockParser.Open(parent, reader, pc)
}

// depth is the number of quotes and lists n is in, itself included.
func depth(n ast.Node) int {
	d := 0
	for ; n != nil; n = n.Parent() {
		if k := n.Kind(); k == ast.KindBlockquote || k == ast.KindList {
			d++
		}
	}
	return d
}

// markBound charges an inline parser's steps to MaxInlineMarks.
type markBound struct{ parser.InlineParser }

// Parse implements parser.InlineParser.
func (b markBound) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	w := workOf(pc)
	if w.marks >= MaxInlineMarks {
		w.marksRefused++
		return nil
	}
	w.marks++
	return b.InlineParser.Parse(parent, block, pc)
}

// CloseBlock implements parser.CloseBlocker for the parsers that are one.
func (b markBound) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if cb, ok := b.InlineParser.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
}

// linkBound charges the link parser's steps to MaxLinkWork.
type linkBound struct{ parser.InlineParser }

// Parse implements parser.InlineParser.
func (b linkBound) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	w := workOf(pc)
	cost := w.blockLen(parent)
	if w.linkBytes+cost > MaxLinkWork {
		w.linkRefused++
		return nil
	}
	w.linkBytes += cost
	return b.InlineParser.Parse(parent, block, pc)
}

// CloseBlock implements parser.CloseBlocker: the link parser turns the
// brackets left open into text there.
func (b linkBound) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if cb, ok := b.InlineParser.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
}

// blockLen is the length of the text of the block an inline parser works
// in, in bytes; it is counted once per block.
func (w *work) blockLen(n ast.Node) int {
	for ; n != nil && n.Type() != ast.TypeBlock; n = n.Parent() {
	}
	if n == nil {
		return 0
	}
	if n == w.lenOf {
		return w.lenIs
	}
	total := 0
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		total += seg.Len()
	}
	w.lenOf, w.lenIs = n, total
	return total
}
