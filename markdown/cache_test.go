package markdown

import (
	"strings"
	"testing"
	"time"
)

// TestRendererKeepsWhatItRendered: a body shown again is not rendered
// again, unless its highlighting was cut short; the kept pages stay
// within their bytes.
func TestRendererKeepsWhatItRendered(t *testing.T) {
	reads := 0
	clock := tick(time.Millisecond)
	r := NewRenderer(Options{HighlightBudget: time.Hour, Now: func() time.Time { reads++; return clock() }})
	body := "```go\nx := 1\n```"
	first := r.HTML(body)
	n := reads
	if r.HTML(body) != first || reads != n {
		t.Fatalf("the second render read the clock %d more times: not kept", reads-n)
	}

	cut := NewRenderer(Options{HighlightBudget: time.Millisecond, Now: tick(time.Millisecond)})
	long := "```go\n" + strings.Repeat("x := 1\n", 100) + "```"
	cut.HTML(long)
	if _, ok := cut.cache.get(key('h', long)); ok {
		t.Fatal("a render cut by the budget was kept")
	}

	small := NewRenderer(Options{CacheBytes: 1000})
	for i := range 100 {
		small.HTML(strings.Repeat("word ", 20) + string(rune('a'+i%26)) + strings.Repeat("!", i))
	}
	if small.cache.size > 1000 || small.cache.order.Len() == 0 || small.cache.order.Len() != len(small.cache.byKey) {
		t.Fatalf("kept %d bytes in %d entries (%d keys), want at most 1000", small.cache.size, small.cache.order.Len(), len(small.cache.byKey))
	}
}
