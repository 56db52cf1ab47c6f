package search

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// relevanceCase is one entry of samples/relevance.json.
type relevanceCase struct {
	Query       string `json:"query"`
	Top         string `json:"top"` // "" means nothing may match
	Kind        string `json:"kind"`
	Product     string `json:"product"`
	Environment string `json:"environment"`
	Note        string `json:"note"`
}

// TestRelevance is search quality as a tested feature: over the sample
// records, each query's expected record ranks first, and the queries about
// something the records do not cover find nothing at all.
func TestRelevance(t *testing.T) {
	b, err := os.ReadFile("../samples/relevance.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []relevanceCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 25 {
		t.Fatalf("only %d relevance cases", len(cases))
	}
	f := setup(t, samples(t))
	ctx := context.Background()
	misses := 0
	for _, c := range cases {
		t.Run(c.Query, func(t *testing.T) {
			res, err := f.idx.Search(ctx, knowledge.Query{Text: c.Query, Limit: knowledge.MaxLimit,
				Kind: c.Kind, Product: c.Product, Environment: c.Environment})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.ID)
			}
			if c.Top == "" {
				misses++
				if len(got) > 0 {
					t.Errorf("want no hits, got %v", got)
				}
				return
			}
			if len(got) == 0 || got[0] != c.Top {
				t.Errorf("top = %v, want %s (%s)", got, c.Top, c.Note)
			}
		})
	}
	if misses == 0 {
		t.Error("the relevance table has no expected misses")
	}
}
