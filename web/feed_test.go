package web

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/markdown"
)

// TestFeedSummaryIsText: an entry's summary is what a reader of the page
// reads, without the Markdown the body was written in (issue 36), and a
// long body is cut to summaryLen characters.
func TestFeedSummaryIsText(t *testing.T) {
	h := &Handler{deps: Deps{PublicURL: "https://kfa.test", Now: time.Now}, md: markdown.NewRenderer(markdown.Options{})}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	body := "Why does **this** loop leak? See [the docs](https://go.dev/doc).\n\n```go\nfor {\n\tgo work()\n}\n```\n\n> quoted `code`\n\n" +
		strings.Repeat("word ", 400)
	b, err := h.atom("", []discussions.Discussion{{ID: "d1", Title: "A leak", Body: body, AuthorName: "alice", CreatedAt: now, Status: discussions.StatusOpen}})
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Entries []struct {
			Summary string `xml:"summary"`
		} `xml:"entry"`
	}
	if err := xml.Unmarshal(b, &f); err != nil || len(f.Entries) != 1 {
		t.Fatalf("feed: %v\n%s", err, b)
	}
	s := f.Entries[0].Summary
	if !strings.HasPrefix(s, "Why does this loop leak? See the docs. for { go work() } quoted code word word") {
		t.Errorf("summary %q", s)
	}
	for _, syntax := range []string{"**", "```", "`", "](", "> "} {
		if strings.Contains(s, syntax) {
			t.Errorf("summary holds %q: %q", syntax, s)
		}
	}
	if n := len([]rune(s)); n > summaryLen+1 || !strings.HasSuffix(s, "…") {
		t.Errorf("summary of %d characters: %q", n, s)
	}
}
