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
	Top         string `json:"top"` // "" means nothing may match (unless TopDiscussion is set)
	Kind        string `json:"kind"`
	Product     string `json:"product"`
	Environment string `json:"environment"`
	// TopDiscussion is the key of a discussion of
	// search/testdata/discussions.json that must rank first.
	TopDiscussion string `json:"topDiscussion"`
	// MinHits is the least number of hits (filtered and broad queries
	// must not turn partial matches into a miss).
	MinHits int    `json:"minHits"`
	Note    string `json:"note"`
}

// TestRelevance is search quality as a tested feature: over the sample
// records and the discussions of testdata/discussions.json, each query's
// expected record or discussion ranks first, filtered queries return
// only what their filters allow and at least minHits, and the queries
// about something neither covers find nothing at all.
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
	discs := loadDiscussions(t, f)
	ctx := context.Background()
	misses, byDiscussion := 0, 0
	for _, c := range cases {
		t.Run(c.Query, func(t *testing.T) {
			res, err := f.idx.Search(ctx, knowledge.Query{Text: c.Query, Limit: knowledge.MaxLimit,
				Kind: c.Kind, Product: c.Product, Environment: c.Environment})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(res.Hits)
			for _, h := range res.Hits {
				if c.Kind != "" && h.Kind != c.Kind || c.Product != "" && h.Product != c.Product ||
					c.Environment != "" && h.Environment != c.Environment {
					t.Errorf("hit %s (%s/%s/%s) breaks the filters", h.ID, h.Kind, h.Product, h.Environment)
				}
			}
			if len(got) < c.MinHits {
				t.Errorf("%d hits %v, want at least %d (%s)", len(got), got, c.MinHits, c.Note)
			}
			want := c.Top
			if c.TopDiscussion != "" {
				byDiscussion++
				if want = discs[c.TopDiscussion]; want == "" {
					t.Fatalf("no discussion %q in testdata/discussions.json", c.TopDiscussion)
				}
			}
			if want == "" {
				misses++
				if len(got) > 0 {
					t.Errorf("want no hits, got %v", got)
				}
				return
			}
			if len(got) == 0 || got[0] != want {
				t.Errorf("top = %v, want %s (%s)", got, want, c.Note)
			}
		})
	}
	if misses == 0 || byDiscussion == 0 {
		t.Errorf("the relevance table has %d expected misses and %d discussion answers; want some of each", misses, byDiscussion)
	}
}
