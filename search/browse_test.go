package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

// TestBrowse: records newest first, narrowed by kind and product in any
// case, in pages that add up to all of them, with counts to narrow by;
// discussions are never listed.
func TestBrowse(t *testing.T) {
	var lines strings.Builder
	for i := range 7 {
		kind := "fix"
		if i%2 == 1 {
			kind = "howto"
		}
		product := "bbolt"
		if i%3 == 0 {
			product = "PostgreSQL"
		}
		fmt.Fprintf(&lines, `{"id":"rec-%d","kind":%q,"product":%q,"title":"Record %d","body":"Body of record %d.","updatedAt":"2026-01-0%dT10:00:00Z"}`+"\n",
			i, kind, product, i, i, i+1)
	}
	f := setup(t, lines.String())
	c := newCommunity(t, f)
	c.ask(t, "A question about bbolt fix", "")
	ctx := context.Background()
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	all := func(q knowledge.BrowseQuery) ([]string, knowledge.BrowsePage) {
		t.Helper()
		var ids []string
		var first knowledge.BrowsePage
		for n := 0; ; n++ {
			p, err := f.idx.Browse(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				first = p
			}
			for _, r := range p.Records {
				ids = append(ids, r.ID)
			}
			if q.After = p.Next; q.After == "" {
				return ids, first
			}
		}
	}
	ids, p := all(knowledge.BrowseQuery{Limit: 3})
	if want := []string{"rec-6", "rec-5", "rec-4", "rec-3", "rec-2", "rec-1", "rec-0"}; !slices.Equal(ids, want) || p.Total != 7 {
		t.Fatalf("all records: %v (total %d), want %v", ids, p.Total, want)
	}
	if r := p.Records[0]; r.Title != "Record 6" || r.Kind != "fix" || r.Product != "PostgreSQL" || r.Snippet != "Body of record 6." || r.UpdatedAt.IsZero() {
		t.Fatalf("first record: %+v", r)
	}
	if !slices.Equal(p.Kinds, []knowledge.Facet{{Value: "fix", Count: 4}, {Value: "howto", Count: 3}}) ||
		!slices.Equal(p.Products, []knowledge.Facet{{Value: "bbolt", Count: 4}, {Value: "postgresql", Count: 3}}) {
		t.Fatalf("facets: %+v %+v", p.Kinds, p.Products)
	}
	ids, p = all(knowledge.BrowseQuery{Kind: "FIX", Product: "postgresql", Limit: 1})
	if want := []string{"rec-6", "rec-0"}; !slices.Equal(ids, want) || p.Total != 2 {
		t.Fatalf("fixes of postgresql: %v (total %d), want %v", ids, p.Total, want)
	}
	for _, bad := range []knowledge.BrowseQuery{{After: "nope"}, {Limit: knowledge.MaxBrowseSize + 1}} {
		if _, err := f.idx.Browse(ctx, bad); err == nil {
			t.Fatalf("%+v: accepted", bad)
		}
	}
}
