package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// GitHub's extensions are built from their parts rather than through
// goldmark's Extend, so each part can be wrapped in its bound; the
// priorities are the ones their extensions register.

// gfmMarks are the inline marks GitHub adds: strikethrough.
func gfmMarks() []util.PrioritizedValue {
	return []util.PrioritizedValue{util.Prioritized(extension.NewStrikethroughParser(), 500)}
}

// gfmInlines are task-list boxes (one per list item at most) and bare
// http(s) links (linear, and triggered by every space: not marks).
func gfmInlines() []util.PrioritizedValue {
	return []util.PrioritizedValue{
		util.Prioritized(extension.NewTaskCheckBoxParser(), 0),
		util.Prioritized(extension.NewLinkifyParser(
			extension.WithLinkifyAllowedProtocols([]string{"http:", "https:"}),
		), 999),
	}
}

// tableTransformers turn a paragraph whose second line is a delimiter row
// into a table, within MaxTableCells.
func tableTransformers() []util.PrioritizedValue {
	return []util.PrioritizedValue{util.Prioritized(tableBound{extension.NewTableParagraphTransformer()}, 200)}
}

func tableASTTransformers() []util.PrioritizedValue {
	return []util.PrioritizedValue{
		util.Prioritized(extension.NewTableASTTransformer(), 0),
		util.Prioritized(tableTabStops{}, 1),
	}
}

// tableTabStops makes every table a tab stop: one wider than the page
// scrolls (kfa.css), and a keyboard must reach it to scroll it.
type tableTabStops struct{}

// Transform implements parser.ASTTransformer.
func (tableTabStops) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.Kind() == east.KindTable {
			n.SetAttributeString("tabindex", []byte("0"))
			return ast.WalkSkipChildren, nil
		}
		if n.Type() == ast.TypeInline {
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

// tableBound charges a table's cells before it is built: every row is
// padded to the delimiter row's width, so a wide delimiter row and many
// short rows would make cells out of nothing.
type tableBound struct{ parser.ParagraphTransformer }

// Transform implements parser.ParagraphTransformer.
func (b tableBound) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	src := reader.Source()
	cols := 0
	for i := range lines.Len() {
		seg := lines.At(i)
		if c := delimiterCells(seg.Value(src)); c > 0 {
			cols = c
			break
		}
	}
	if cols == 0 {
		return // no table
	}
	// Escaped pipes in code spans are resolved by comparing every cell
	// that holds one with every other: count each such pipe as a row.
	escaped := 0
	for i := range lines.Len() {
		seg := lines.At(i)
		escaped += bytes.Count(seg.Value(src), []byte(`\|`))
	}
	w := workOf(pc)
	// The escaped pipes of all the body's tables are compared with each
	// other: they cost the square of their number.
	pipes := w.escapedPipes + escaped
	cost := cols*lines.Len() + pipes*pipes - w.escapedPipes*w.escapedPipes
	if w.cells+cost > MaxTableCells {
		w.tablesRefused++
		return
	}
	w.cells += cost
	w.escapedPipes = pipes
	b.ParagraphTransformer.Transform(node, reader, pc)
}

// delimiterCells is the number of cells of line when it reads as a
// table's delimiter row (|---|:--:|), else 0: an upper bound on the
// width the table parser would give the table.
func delimiterCells(line []byte) int {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || !bytes.Contains(line, []byte("-")) {
		return 0
	}
	for _, c := range line {
		if c != '|' && c != '-' && c != ':' && c != ' ' && c != '\t' {
			return 0
		}
	}
	return bytes.Count(line, []byte("|")) + 1
}
