package markdown

import (
	"bytes"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// languages are the fenced-code languages highlighted, by the names a
// fence may give (```go), each mapped to its chroma lexer. chroma's
// lexers are regular expressions with backtracking; these are the ones
// whose worst inputs were measured (see TestHighlightWorstCase), and a
// fence naming another language is shown as plain code.
var languages = map[string]string{
	"go": "Go", "golang": "Go",
	"python": "Python", "py": "Python",
	"javascript": "JavaScript", "js": "JavaScript",
	"typescript": "TypeScript", "ts": "TypeScript",
	"json": "JSON",
	"yaml": "YAML", "yml": "YAML",
	"bash": "Bash", "sh": "Bash", "shell": "Bash",
	"sql":  "SQL",
	"rust": "Rust", "rs": "Rust",
	"java": "Java",
	"c":    "C", "cpp": "C++", "c++": "C++",
	"diff":       "Diff",
	"toml":       "TOML",
	"dockerfile": "Docker",
	"html":       "HTML", "xml": "XML", "css": "CSS",
	"ruby": "Ruby", "rb": "Ruby",
	"protobuf": "Protocol Buffer", "proto": "Protocol Buffer",
	"makefile": "Makefile", "make": "Makefile",
	"ini": "INI",
}

// lexerFor returns the lexer of a fence's language, or nil.
var lexerFor = func() func(lang string) chroma.Lexer {
	var mu sync.Mutex
	cache := map[string]chroma.Lexer{}
	return func(lang string) chroma.Lexer {
		name, ok := languages[strings.ToLower(lang)]
		if !ok {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		l, ok := cache[name]
		if !ok {
			// Not coalesced: a coalescer lexes a whole run of tokens of one
			// kind before it returns, and the budget is read between tokens.
			l = lexers.Get(name)
			warm(l)
			cache[name] = l
		}
		return l
	}
}()

// warm makes l compile its expressions (chroma does it on first use),
// so that the once-per-process cost is not charged to a body's budget.
func warm(l chroma.Lexer) {
	if l == nil {
		return
	}
	if it, err := l.Tokenise(nil, "x\n"); err == nil {
		for t := it(); t != chroma.EOF; t = it() {
		}
	}
}

// budgetKey holds, on the document node, the highlight budget of the
// render under way.
var budgetKey = []byte("kfaHighlightBudget")

// highlightBudget is the time one render may spend lexing code. chroma's
// lexers are regular expressions tried rule after rule at every token:
// measured in thread CPU time, an ordinary token costs a few µs, and
// hostile code up to 30 µs a byte, 50 times more in one lexer than in
// another, so no count of bytes or tokens bounds the time; the clock is
// read between tokens instead. Code past the budget is shown plain.
type highlightBudget struct {
	now    func() time.Time
	budget time.Duration
	// deadline is set when the first block starts: parsing is bounded
	// on its own, and a body without code never reads the clock.
	deadline time.Time
	tokens   int // tokens lexed, for tests
	out      bool
}

// start starts the clock, once.
func (b *highlightBudget) start() {
	if b.deadline.IsZero() {
		b.deadline = b.now().Add(b.budget)
	}
}

// spent reports whether the budget ran out, reading the clock.
func (b *highlightBudget) spent() bool {
	if !b.out && !b.now().Before(b.deadline) {
		b.out = true
	}
	return b.out
}

func budgetOf(n ast.Node) *highlightBudget {
	if d := n.OwnerDocument(); d != nil {
		if v, ok := d.Attribute(budgetKey); ok {
			if b, ok := v.(*highlightBudget); ok {
				return b
			}
		}
	}
	return nil
}

// codeBlocks renders code blocks: fenced ones in a known language as
// highlighted spans while the render's budget lasts, the others as
// escaped text.
type codeBlocks struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (c codeBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, c.render)
	reg.Register(ast.KindCodeBlock, c.render)
}

func (c codeBlocks) render(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	var code bytes.Buffer
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		code.Write(seg.Value(src))
	}
	lang := ""
	if fc, ok := n.(*ast.FencedCodeBlock); ok {
		if l := strings.ToLower(string(fc.Language(src))); languages[l] != "" {
			lang = l
		}
	}
	// tabindex: a block wider than the page scrolls, and a keyboard must
	// reach it to scroll it.
	if lang != "" {
		_, _ = w.WriteString(`<pre class="code" tabindex="0"><code class="language-` + lang + `">`)
	} else {
		_, _ = w.WriteString(`<pre class="code" tabindex="0"><code>`)
	}
	rest := code.String()
	if b := budgetOf(n); lang != "" && b != nil {
		lexer := lexerFor(lang) // compiled before the clock starts
		b.start()
		if !b.spent() {
			rest = writeTokens(w, lexer, rest, b)
		}
	}
	_, _ = w.Write(util.EscapeHTML([]byte(rest)))
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// lexChunk is the most code lexed in one piece, in bytes. A rule's
// expression may scan to the end of what it is given (an unclosed string
// or comment), so the code is lexed in pieces of whole lines, each from
// the lexer's first state: one step scans at most a piece. A construct
// across a cut (a long block comment) may lose its colour there. A line
// longer than a piece ends the highlighting of its block.
const lexChunk = 2048

// writeTokens writes code lexed into spans whose classes CSS colours,
// until the budget runs out, and returns the code it did not write.
func writeTokens(w util.BufWriter, lexer chroma.Lexer, code string, b *highlightBudget) string {
	if lexer == nil {
		return code
	}
	for code != "" && !b.spent() {
		n := chunkLen(code)
		if n == 0 {
			break // a line too long to lex
		}
		done, ok := writeChunk(w, lexer, code[:n], b)
		code = code[done:]
		if !ok {
			break
		}
	}
	return code
}

// chunkLen is the length of the first piece of code: whole lines, at
// most lexChunk bytes; 0 when the first line is longer.
func chunkLen(code string) int {
	if len(code) <= lexChunk {
		return len(code)
	}
	return strings.LastIndexByte(code[:lexChunk], '\n') + 1
}

// writeChunk writes one piece lexed, and says how many bytes of it it
// wrote and whether it wrote them all.
func writeChunk(w util.BufWriter, lexer chroma.Lexer, code string, b *highlightBudget) (int, bool) {
	it, err := lexer.Tokenise(&chroma.TokeniseOptions{State: "root"}, code)
	if err != nil {
		return 0, false
	}
	done := 0
	for t := it(); t != chroma.EOF && done < len(code); t = it() {
		b.tokens++
		v := t.Value[:min(len(t.Value), len(code)-done)] // a lexer may add a final newline
		esc := util.EscapeHTML([]byte(v))
		if class := tokenClass(t.Type); class != "" {
			_, _ = w.WriteString(`<span class="` + class + `">`)
			_, _ = w.Write(esc)
			_, _ = w.WriteString(`</span>`)
		} else {
			_, _ = w.Write(esc)
		}
		done += len(v)
		if b.spent() {
			break
		}
	}
	return done, done == len(code)
}

// tokenClass is the class of a token kind: a few groups, each coloured
// in both schemes with enough contrast (see kfa.css); "" for plain.
func tokenClass(t chroma.TokenType) string {
	switch {
	case t.InCategory(chroma.Comment):
		return "hl-c"
	case t.InCategory(chroma.Keyword):
		return "hl-k"
	case t.InSubCategory(chroma.LiteralString):
		return "hl-s"
	case t.InSubCategory(chroma.LiteralNumber):
		return "hl-n"
	case t == chroma.NameFunction || t == chroma.NameClass || t == chroma.NameBuiltin:
		return "hl-f"
	case t == chroma.GenericInserted:
		return "hl-i"
	case t == chroma.GenericDeleted:
		return "hl-d"
	}
	return ""
}
