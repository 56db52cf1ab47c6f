package search

import (
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/search"
)

// TestByRankFollowed: the merge of trust's ranking with federation's. A
// peer's document never outranks a local one of equal relevance, but
// trust and relevance still come before where a document is from.
func TestByRankFollowed(t *testing.T) {
	cand := func(id string, score, weight float64, updated string) candidate {
		return candidate{dm: &search.DocumentMatch{ID: id, Score: score}, cov: 1, sig: signalsDoc{Weight: weight},
			doc: stored{fields: map[string]string{fUpdated: updated}}}
	}
	const older, newer = "2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"
	for _, tc := range []struct {
		name string
		in   []candidate
		want []string
	}{
		{"local first at equal relevance, even when older",
			[]candidate{cand("peer:b/r1", 2, 0, newer), cand("r1", 2, 0, older)}, []string{"r1", "peer:b/r1"}},
		{"a more relevant peer document first",
			[]candidate{cand("r1", 2, 0, newer), cand("peer:b/r1", 3, 0, older)}, []string{"peer:b/r1", "r1"}},
		{"a trusted local document above a more relevant peer's",
			[]candidate{cand("peer:b/r1", 3, 0, newer), cand("r1", 2, 1, older)}, []string{"r1", "peer:b/r1"}},
		{"recency between two peer documents",
			[]candidate{cand("peer:b/r1", 2, 0, older), cand("peer:b/r2", 2, 0, newer)}, []string{"peer:b/r2", "peer:b/r1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(tc.in)
			slices.SortStableFunc(got, byRank)
			ids := make([]string, len(got))
			for i, c := range got {
				ids[i] = c.dm.ID
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("ranked %v, want %v", ids, tc.want)
			}
		})
	}
}
