package markdown

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/kfa-project/kfa/markdown/markdowntest"
)

// tick is a clock that moves step forward each time it is read, so the
// highlight budget runs out after a known number of readings whatever
// the machine's speed.
func tick(step time.Duration) func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// TestHostileBodiesBounded feeds every worst body known to each bound
// and checks the work it was allowed, never the time it took: how deep
// containers nest, what the link parser looked at, the inline marks
// parsed, the table cells made, the tokens lexed, and what the page
// grew to.
func TestHostileBodiesBounded(t *testing.T) {
	const step = 10 * time.Microsecond
	maxTokens := int(DefaultHighlightBudget/step) + 1 // one reading per token, and the first
	for _, b := range markdowntest.Hostile() {
		t.Run(b.Name, func(t *testing.T) {
			hb := &highlightBudget{now: tick(step), budget: DefaultHighlightBudget}
			out, w := render(b.Text, hb)
			if d := nesting(string(out)); d > MaxDepth {
				t.Errorf("quotes and lists nest %d deep, want at most %d", d, MaxDepth)
			}
			if w.linkBytes > MaxLinkWork {
				t.Errorf("the link parser looked at %d bytes, want at most %d", w.linkBytes, MaxLinkWork)
			}
			if w.marks > MaxInlineMarks {
				t.Errorf("%d inline marks parsed, want at most %d", w.marks, MaxInlineMarks)
			}
			if c := strings.Count(string(out), "<td") + strings.Count(string(out), "<th"); w.cells > MaxTableCells || c > MaxTableCells {
				t.Errorf("%d table cells made (%d charged), want at most %d", c, w.cells, MaxTableCells)
			}
			if hb.tokens > maxTokens {
				t.Errorf("%d tokens lexed, want at most %d", hb.tokens, maxTokens)
			}
			// Every byte of the page comes from a byte of the body: escaping
			// and markup multiply it by a bounded factor.
			if len(out) > 8*len(b.Text) {
				t.Errorf("the page is %d bytes for a body of %d", len(out), len(b.Text))
			}
			checkSafe(t, b.Name, string(out))
		})
	}
}

// nesting is how deep quotes and lists nest in the HTML h.
func nesting(h string) int {
	z := html.NewTokenizer(strings.NewReader(h))
	depth, deepest := 0, 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return deepest
		case html.StartTagToken:
			if n, _ := z.TagName(); isNest(string(n)) {
				depth++
				deepest = max(deepest, depth)
			}
		case html.EndTagToken:
			if n, _ := z.TagName(); isNest(string(n)) {
				depth--
			}
		}
	}
}

func isNest(tag string) bool { return tag == "blockquote" || tag == "ul" || tag == "ol" }

// TestBoundsLeaveOrdinaryTextAlone: what people write never meets a
// bound, so it renders exactly as goldmark's GitHub dialect would.
func TestBoundsLeaveOrdinaryTextAlone(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		b.WriteString("A paragraph with *emphasis*, `code`, a [link](https://go.dev/) and ~~old~~ text.\n\n")
		b.WriteString("> a quote\n> > nested\n\n- a list\n  - nested\n    1. deeper\n\n")
		b.WriteString("| a | b |\n|---|---|\n| 1 | 2 |\n\n")
		if i%4 == 0 {
			b.WriteString("```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n")
		}
	}
	hb := &highlightBudget{now: tick(time.Microsecond), budget: time.Hour}
	_, w := render(b.String(), hb)
	if w.depthRefused+w.linkRefused+w.marksRefused+w.tablesRefused != 0 {
		t.Fatalf("an ordinary body met a bound: %+v", *w)
	}
}

// TestHighlightStopsWhenTheBudgetIsSpent: the code past the budget is
// there, plain; what was highlighted before stays.
func TestHighlightStopsWhenTheBudgetIsSpent(t *testing.T) {
	code := strings.Repeat("x := 1\n", 2000)
	r := NewRenderer(Options{Now: tick(100 * time.Microsecond), HighlightBudget: time.Millisecond, CacheBytes: -1})
	out := string(r.HTML("```go\n" + code + "```"))
	spans := strings.Count(out, "<span")
	if spans == 0 || spans > 20 {
		t.Fatalf("%d spans, want some and at most 20 (10 readings of the clock)", spans)
	}
	if got := strings.Count(out, "x :="); got != 2000 {
		t.Fatalf("%d of the 2000 lines are on the page:\n%.300s", got, out)
	}
}

// TestLongLineIsNotLexed: a line longer than a piece is never given to a
// lexer.
func TestLongLineIsNotLexed(t *testing.T) {
	hb := &highlightBudget{now: tick(time.Microsecond), budget: time.Hour}
	out, _ := render("```go\nvar a = 1\n"+strings.Repeat("a", lexChunk+1)+"\nvar b = 2\n```", hb)
	if !strings.Contains(string(out), `<span class="hl-k">var</span> a`) {
		t.Errorf("the first line is not highlighted:\n%.200s", out)
	}
	if strings.Contains(string(out), `<span class="hl-k">var</span> b`) {
		t.Errorf("the line after a long one was lexed")
	}
	if hb.tokens > 10 {
		t.Errorf("%d tokens lexed", hb.tokens)
	}
}
