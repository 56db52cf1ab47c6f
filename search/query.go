package search

import (
	"context"
	"math"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// maxTerms bounds the distinct terms of one query: a long question still
// costs a bounded number of term lookups.
const maxTerms = 32

// minRelevance is the floor under which a match is not an answer: the
// honest miss. A match's relevance is its BM25 score times its coverage
// (the share of the query's information it holds, see coverage). bleve
// normalises every query's term weights (queryNorm), so scores are on one
// scale across queries, and a score reflects the rarity of the terms
// (idf), not the size of the index. Tuned on samples/relevance.json and
// the off-topic table in the tests: the expected answers score 0.07 and
// more, off-topic questions that share a common word with some record
// (how MANY calories..., best pizza places OPEN late) 0.03 and less.
const minRelevance = 0.05

// fullCoverage is the coverage at which a match is an answer whatever its
// score: it holds nearly all of the query's information. BM25 scores are
// small in a small index (every term is common among few documents), so
// the score floor alone would hide exact answers there, for instance among
// the first answered discussions.
const fullCoverage = 0.75

// relevant applies the two rules above to a match covering cov.
func relevant(score, cov float64) bool {
	return cov >= fullCoverage || score*cov >= minRelevance
}

// field is a searched field and its weight.
type field struct {
	name  string
	boost float64
}

// Weights. A query term in a record's title says more than in its body;
// tags are the curator's own summary.
var (
	recordFields     = []field{{fTitle, 3}, {fTags, 1.5}, {fBody, 1}}
	discussionFields = []field{{fTitle, 2}, {fBody, 1}, {fAnswers, 1}}
)

// terms analyses text as the index did (English: lower case, stop words
// out, stemmed) and returns its distinct terms, in order, at most maxTerms.
func terms(m *mapping.IndexMappingImpl, text string) []string {
	a := m.AnalyzerNamed(en.AnalyzerName)
	if a == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, tok := range a.Analyze([]byte(text)) {
		t := string(tok.Term)
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == maxTerms {
			break
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
func textQuery(ts []string, fields []field, common map[string]bool) query.Query {
	var rare []string
	for _, t := range ts {
		if !common[t] {
			rare = append(rare, t)
		}
	}
	all := pairs(ts, fields, 1)
	if len(rare) == 0 || len(rare) == len(ts) {
		return all
	}
	return bleve.NewConjunctionQuery(pairs(rare, fields, 0), all)
}

// pairs is the disjunction of every (term, field) pair, with the fields'
// boosts scaled by scale (0: match without scoring).
func pairs(ts []string, fields []field, scale float64) query.Query {
	qs := make([]query.Query, 0, len(ts)*len(fields))
	for _, t := range ts {
		for _, f := range fields {
			qs = append(qs, termQuery(t, f.name, f.boost*scale))
		}
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// filtered adds exact keyword filters to q. They score nothing (boost 0),
// so filtering never reorders the hits.
func filtered(m *mapping.IndexMappingImpl, q query.Query, filters map[string]string) query.Query {
	must := []query.Query{q}
	for _, f := range []string{fKind, fProduct, fEnv} {
		if v := filters[f]; v != "" {
			must = append(must, termQuery(keywordTerm(m, v), f, 0))
		}
	}
	if len(must) == 1 {
		return q
	}
	return bleve.NewConjunctionQuery(must...)
}

// keywordTerm normalises a filter value as the keyword fields were.
func keywordTerm(m *mapping.IndexMappingImpl, v string) string {
	a := m.AnalyzerNamed(keywordAnalyzer)
	if a == nil {
		return v
	}
	toks := a.Analyze([]byte(v))
	if len(toks) != 1 {
		return v
	}
	return string(toks[0].Term)
}

// termStats are the query terms' weights in an index.
type termStats struct {
	// weight is each term's inverse document frequency (the BM25 idf,
	// over the fields searched): rare terms carry more of a query's
	// meaning. A term no document holds gets the highest weight, because
	// a query about it is a query the index cannot answer.
	weight map[string]float64
	// common holds the terms in more than commonShare of the documents.
	common map[string]bool
}

// stats reads the terms' document frequencies in idx.
func stats(ctx context.Context, idx bleve.Index, ts []string, fields []field) (termStats, error) {
	st := termStats{weight: make(map[string]float64, len(ts)), common: map[string]bool{}}
	adv, err := idx.Advanced()
	if err != nil {
		return st, err
	}
	r, err := adv.Reader()
	if err != nil {
		return st, err
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil {
		return st, err
	}
	for _, t := range ts {
		df := uint64(0)
		for _, f := range fields {
			c, err := termCount(ctx, r, t, f.name)
			if err != nil {
				return st, err
			}
			df = max(df, c)
		}
		df = min(df, n)
		st.weight[t] = math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
		if float64(df) > commonShare*float64(n) {
			st.common[t] = true
		}
	}
	return st, nil
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
