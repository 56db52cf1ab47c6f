package search

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/collector"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/knowledge/knowledgetest"
)

// prunedIndex is an index of generated records written in several
// batches, some of them then changed and some deleted, so that its
// segments hold deleted documents: the postings topDocs reads are of
// every kind bleve keeps.
func prunedIndex(t *testing.T) *fixture {
	t.Helper()
	f := setup(t, "")
	ctx := context.Background()
	g, changed := knowledgetest.New(3), knowledgetest.New(4)
	write := func(from, to int, gen *knowledgetest.Gen) {
		batch := make([]knowledge.Record, 0, to-from)
		for i := from; i < to; i++ {
			batch = append(batch, gen.Record(i))
		}
		if _, err := f.svc.Upsert(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := f.idx.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 500, g)
	write(500, 1000, g)
	write(0, 100, changed)
	for i := 900; i < 920; i++ {
		if err := f.svc.Delete(ctx, fmt.Sprintf("gen-%06d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTopDocsFindBleveTop: the pruned search finds the documents bleve's
// full search ranks first, with bleve's scores in bleve's order, for
// typical and common-word queries, with and without filters, while
// scoring only a part of what the queries match.
func TestTopDocsFindBleveTop(t *testing.T) {
	f := prunedIndex(t)
	x, ctx := f.idx, context.Background()
	x.mu.RLock()
	defer x.mu.RUnlock()
	r, err := reader(x.rec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	g := knowledgetest.New(5)
	var queries []string
	for range 60 {
		queries = append(queries, g.Query(), g.CommonQuery())
	}
	queries = append(queries, "marker000123 server", "the", "quasar nebula")
	filterSets := [][]keywordFilter{nil, {{fKind, "fix"}}, {{fProduct, "bbolt"}, {fEnv, "linux"}}, {{fProduct, "no-such-product"}}}

	matched, scored, cheap, mixed := 0, 0, 0, 0
	for i, q := range queries {
		fs := filterSets[i%len(filterSets)]
		t.Run(fmt.Sprintf("%s/%v", q, fs), func(t *testing.T) {
			ts := x.an.terms(q)
			if len(ts) == 0 {
				return
			}
			st, err := stats(ctx, r, ts)
			if err != nil {
				t.Fatal(err)
			}
			s := &run{x: x, r: r}
			want, total := bleveTop(t, s, ts, st, fs)
			got, err := s.candidates(ctx, ts, st, fs)
			if err != nil {
				t.Fatal(err)
			}
			sameTop(t, got, want)

			_, p, err := topDocs(ctx, r, ts, st.common, fs, candidates)
			if err != nil {
				t.Fatal(err)
			}
			matched += int(total)
			scored += p.scoredDocs
			for _, l := range p.lists {
				if !l.exact {
					cheap++
				}
				if !l.driver {
					mixed++
				}
			}
		})
	}
	if scored*2 > matched {
		t.Errorf("scored %d of the %d documents the queries matched; pruning should skip most of them", scored, matched)
	}
	if cheap == 0 || mixed == 0 {
		t.Errorf("%d lists read for membership only, %d lists of common terms beside rare ones; the queries should need both", cheap, mixed)
	}
}

// filtered is q within the keyword filters fs, as bleve's query: the
// filters' term queries score nothing (boost 0).
func filtered(q query.Query, fs []keywordFilter) query.Query {
	if len(fs) == 0 {
		return q
	}
	must := []query.Query{q}
	for _, f := range fs {
		must = append(must, termQuery(f.term, f.field, 0))
	}
	return bleve.NewConjunctionQuery(must...)
}

// bleveTop is bleve's own top of the query, every match scored, in the
// snapshot r reads, and how many documents matched.
func bleveTop(t *testing.T, s *run, ts []string, st termStats, fs []keywordFilter) ([]*search.DocumentMatch, uint64) {
	t.Helper()
	ctx := context.WithValue(context.Background(), search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return index.BM25Scoring }))
	sr, err := filtered(textQuery(ts, st.common), fs).Searcher(ctx, s.r, s.x.rec.Mapping(), search.SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	coll := collector.NewTopNCollector(candidates, 0, search.SortOrder{&search.SortScore{Desc: true}})
	if err := coll.Collect(ctx, sr, s.r); err != nil {
		t.Fatal(err)
	}
	return coll.Results(), coll.Total()
}

// TestRankIsBleveSearch: rank scores and orders as bleve's own search
// does, term locations included.
func TestRankIsBleveSearch(t *testing.T) {
	f := setup(t, samples(t))
	x, ctx := f.idx, context.Background()
	x.mu.RLock()
	defer x.mu.RUnlock()
	r, err := reader(x.rec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := &run{x: x, r: r}
	for _, text := range []string{"bbolt open hangs", "pod keeps restarting with crashloopbackoff", "too many open files", "the"} {
		ts := x.an.terms(text)
		st, err := stats(ctx, r, ts)
		if err != nil {
			t.Fatal(err)
		}
		q := textQuery(ts, st.common)
		got, err := s.rank(ctx, q, candidates)
		if err != nil {
			t.Fatal(err)
		}
		req := bleve.NewSearchRequestOptions(q, candidates, 0, false)
		req.IncludeLocations = true
		want, err := x.rec.SearchInContext(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want.Hits) || len(got) == 0 && len(ts) > 0 {
			t.Fatalf("%q: %d hits, bleve finds %d", text, len(got), len(want.Hits))
		}
		for i, h := range got {
			w := want.Hits[i]
			if h.ID != w.ID || h.Score != w.Score || !reflect.DeepEqual(h.Locations, w.Locations) {
				t.Errorf("%q #%d: %s %v %v, bleve: %s %v %v", text, i, h.ID, h.Score, h.Locations, w.ID, w.Score, w.Locations)
			}
		}
	}
}

// sameTop compares the pruned candidates with bleve's top: the same
// scores in the same order, the same documents except among equal
// scores.
func sameTop(t *testing.T, got []candidate, want []*search.DocumentMatch) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d candidates, bleve ranks %d", len(got), len(want))
	}
	eq := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(a, b) }
	for i, c := range got {
		w := want[i]
		if !eq(c.dm.Score, w.Score) {
			t.Fatalf("#%d: %s scores %v, bleve ranks %s there with %v", i, c.dm.ID, c.dm.Score, w.ID, w.Score)
		}
		if c.dm.ID == w.ID {
			continue
		}
		tied := false
		for j, o := range want {
			tied = tied || j != i && eq(o.Score, w.Score)
		}
		if !tied {
			t.Fatalf("#%d: %s, bleve ranks %s there (score %v)", i, c.dm.ID, w.ID, w.Score)
		}
	}
}

func TestSaturationBound(t *testing.T) {
	k1, b := search.BM25_k1, search.BM25_b
	sat := func(freq, length, avg float64) float64 {
		tf := math.Sqrt(freq)
		return tf * k1 / (tf + k1*(1-b+b*length/avg))
	}
	for _, avg := range []float64{1, 2, 3, 7, 40, 1000} {
		bound := saturationBound(avg)
		if bound >= k1 {
			t.Errorf("avg %v: bound %v, want below k1", avg, bound)
		}
		best := 0.0
		for length := 1.0; length <= 5000; length++ {
			for _, freq := range []float64{1, 2, 3, math.Floor(length / 3), math.Floor(length / 2), length} {
				if freq >= 1 && freq <= length {
					best = max(best, sat(freq, length, avg))
				}
			}
		}
		if best > bound {
			t.Errorf("avg %v: a posting scores %v, above the bound %v", avg, best, bound)
		}
		if best < bound*0.98 {
			t.Errorf("avg %v: the best posting scores %v, the bound %v is loose", avg, best, bound)
		}
	}
}
