package search

import (
	"context"
	"math"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// maxTerms bounds the distinct terms of one query: a long question still
// costs a bounded number of term lookups.
const maxTerms = 32

// field is a searched field and its weight.
type field struct {
	name  string
	boost float64
}

// Weights. A query term in a title (a record's, or a discussion's
// question) says more than in a body; tags are the curator's own summary.
var textFields = []field{{fTitle, 3}, {fTags, 1.5}, {fBody, 1}}

// fillerWords are words questions use to describe rather than to name
// their subject ("looks like a goroutine leak", "how do I keep my
// commits"). Rare in a small knowledge base, they would weigh as much as
// a product name; they are dropped from queries, like stop words.
const fillerWords = "like looks looking seem seems seemed want wants need needs try trying tried " +
	"way ways get gets getting got use using make makes making thing things something anything " +
	"help anyone someone please thanks thank know tell happen happens happened keep keeps kept " +
	"still always never sometimes also just really even able possible best good proper properly"

// analyser is how text becomes query terms, for one mapping (its
// synonyms).
type analyser struct {
	m       *mapping.IndexMappingImpl
	fillers map[string]bool
}

func newAnalysis(m *mapping.IndexMappingImpl) analyser {
	a := analyser{m: m, fillers: map[string]bool{}}
	for _, t := range a.analyse(fillerWords, 0) {
		a.fillers[t] = true
	}
	return a
}

// analyse returns the distinct terms of text as the index analyses it
// (lower case, stop words out, stemmed, synonyms folded), in order, at
// most limit (0: no limit).
func (a analyser) analyse(text string, limit int) []string {
	an := a.m.AnalyzerNamed(textAnalyzer)
	if an == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, tok := range an.Analyze([]byte(text)) {
		t := string(tok.Term)
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == limit {
			break
		}
	}
	return out
}

// terms are the query terms of text: analysed, without filler words, at
// most maxTerms.
func (a analyser) terms(text string) []string {
	var out []string
	for _, t := range a.analyse(text, 0) {
		if a.fillers[t] {
			continue
		}
		out = append(out, t)
		if len(out) == maxTerms {
			break
		}
	}
	return out
}

// keywordTerm normalises a filter value as the keyword fields were.
func (a analyser) keywordTerm(v string) string {
	an := a.m.AnalyzerNamed(keywordAnalyzer)
	if an == nil {
		return v
	}
	toks := an.Analyze([]byte(v))
	if len(toks) != 1 {
		return v
	}
	return string(toks[0].Term)
}

// keywordFilters are the set filters as the keyword terms a document
// must hold (see topDocs). They narrow the candidates and score nothing,
// so filtering never reorders the hits.
func (a analyser) keywordFilters(filters map[string]string) []keywordFilter {
	var out []keywordFilter
	for _, f := range []string{fKind, fProduct, fEnv} {
		if v := filters[f]; v != "" {
			out = append(out, keywordFilter{field: f, term: a.keywordTerm(v)})
		}
	}
	return out
}

func termQuery(term, field string, boost float64) query.Query {
	q := bleve.NewTermQuery(term)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

// commonShare is the share of documents above which a term is common:
// it says little about a document, and its long posting list is costly
// to walk (see textQuery). Over the sample records, 0.2 and 0.3 keep every
// relevance case; 0.1 starts losing answers that hold only common terms.
const commonShare = 0.3

// textQuery scores documents by BM25 over every (term, field) pair, each
// weighted by its field, times the share of pairs matched. It is built
// from analysed terms, never parsed from user text, so no query syntax
// reaches bleve.
//
// When the query has both rare and common terms (see termStats.common),
// only documents holding a rare term are candidates (the classic
// common-terms query): the long posting lists of the common terms are
// then probed at those documents instead of walked in full, which keeps
// a large index fast. The candidate clause scores nothing, so scores are
// those of the plain query.
func textQuery(ts []string, common map[string]bool) query.Query {
	var rare []string
	for _, t := range ts {
		if !common[t] {
			rare = append(rare, t)
		}
	}
	all := pairs(ts, 1)
	if len(rare) == 0 || len(rare) == len(ts) {
		return all
	}
	return bleve.NewConjunctionQuery(pairs(rare, 0), all)
}

// pairs is the disjunction of every (term, field) pair, with the fields'
// boosts scaled by scale (0: match without scoring).
func pairs(ts []string, scale float64) query.Query {
	qs := make([]query.Query, 0, len(ts)*len(textFields))
	for _, t := range ts {
		for _, f := range textFields {
			qs = append(qs, termQuery(t, f.name, f.boost*scale))
		}
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// termStats are the query terms' weights in the index.
type termStats struct {
	// weight is each term's inverse document frequency (the BM25 idf,
	// over the fields searched): rare terms carry more of a query's
	// meaning. A term no document holds gets the highest weight, because
	// a query about it is a query the index cannot answer.
	weight map[string]float64
	// unknown holds the terms no document holds.
	unknown map[string]bool
	// common holds the terms in more than commonShare of the documents.
	common map[string]bool
}

// stats reads the terms' document frequencies through r.
func stats(ctx context.Context, r index.IndexReader, ts []string) (termStats, error) {
	st := termStats{weight: make(map[string]float64, len(ts)), unknown: map[string]bool{}, common: map[string]bool{}}
	n, err := r.DocCount()
	if err != nil {
		return st, err
	}
	for _, t := range ts {
		df, err := docFreq(ctx, r, t)
		if err != nil {
			return st, err
		}
		df = min(df, n)
		st.weight[t] = idf(n, df)
		if df == 0 {
			st.unknown[t] = true
		}
		if float64(df) > commonShare*float64(n) {
			st.common[t] = true
		}
	}
	return st, nil
}

// docFreq is the number of documents holding t in the searched field
// that has it most (an approximation of the union, read in O(1)).
func docFreq(ctx context.Context, r index.IndexReader, t string) (uint64, error) {
	df := uint64(0)
	for _, f := range textFields {
		c, err := termCount(ctx, r, t, f.name)
		if err != nil {
			return 0, err
		}
		df = max(df, c)
	}
	return df, nil
}

func idf(n, df uint64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

func termCount(ctx context.Context, r index.IndexReader, term, field string) (uint64, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, false, false, false)
	if err != nil {
		return 0, err
	}
	defer tfr.Close()
	return tfr.Count(), nil
}

// coverage is the share of the query's weight held by the terms dm
// matched, in any field: 1 when it holds every term, near 0 when it only
// shares a common word.
func coverage(dm *search.DocumentMatch, w map[string]float64) float64 {
	var total, got float64
	for t, v := range w {
		total += v
		for _, locs := range dm.Locations {
			if _, ok := locs[t]; ok {
				got += v
				break
			}
		}
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// questionCoverage is the share of a question's own weight (its analysed
// terms, weighted as the query's are) that the query terms hold: how much
// of an open discussion's question the query asks.
func questionCoverage(ctx context.Context, r index.IndexReader, a analyser, question string, query []string) (float64, error) {
	n, err := r.DocCount()
	if err != nil {
		return 0, err
	}
	asked := make(map[string]bool, len(query))
	for _, t := range query {
		asked[t] = true
	}
	var total, got float64
	for _, t := range a.terms(question) {
		df, err := docFreq(ctx, r, t)
		if err != nil {
			return 0, err
		}
		w := idf(n, min(df, n))
		total += w
		if asked[t] {
			got += w
		}
	}
	if total == 0 {
		return 0, nil
	}
	return got / total, nil
}

// hasFilter reports whether any filter is set.
func hasFilter(filters map[string]string) bool {
	for _, v := range filters {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}
