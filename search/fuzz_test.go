package search

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/kfa-project/kfa/knowledge"
)

// FuzzSearch: whatever an agent sends as query text or filter, search
// answers without error or panic, within the limit, with one-line
// snippets.
func FuzzSearch(f *testing.F) {
	fx := setup(f, samples(f))
	for _, s := range []string{"bbolt", `+title:x -body:"y"`, "\x00\xff", "a*b?c~2 ^3", "OR AND NOT", "日本語 テスト", ""} {
		f.Add(s, "")
	}
	f.Add("database is locked", "bbolt")
	f.Fuzz(func(t *testing.T, text, product string) {
		if !utf8.ValidString(text) || len(text) > 4*knowledge.MaxQueryLen {
			return // the service refuses such text before it reaches the index
		}
		res, err := fx.idx.Search(context.Background(), knowledge.Query{Text: text, Product: product, Limit: 5, Research: true})
		if err != nil {
			t.Fatalf("search %q: %v", text, err)
		}
		if len(res.Hits) > 5 {
			t.Fatalf("%d hits", len(res.Hits))
		}
		for _, h := range res.Hits {
			for _, r := range h.Snippet {
				if r == '\n' || r == '\r' || r < 0x20 {
					t.Fatalf("snippet %q is not one line of text", h.Snippet)
				}
			}
		}
	})
}
