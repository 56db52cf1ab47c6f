package search

import (
	"context"
	"math"

	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// exhausted is the document of a posting list read to its end.
const exhausted = math.MaxUint64

// unbounded is the bound of a list whose scores have no useful bound: it
// is never pruned. Finite, so that sums of bounds stay numbers.
const unbounded = math.MaxFloat64 / 1024

// normSlack is the relative margin for a field length read back from
// its float32 norm (a rounding of about 1e-7).
const normSlack = 1e-6

// postings is one (term, field) posting list read in document order.
type postings struct {
	term, field string
	tfr         index.TermFieldReader
	tfd         index.TermFieldDoc
	buf         index.IndexInternalID
	doc         uint64 // the current document, or exhausted

	// exact lists are read with term frequencies and norms, so score
	// gives a document's score; the others tell only which documents
	// hold the term (skipping ahead costs little), and a document's score
	// is known to lie between 0 and max.
	exact bool
	// bleve's TermQueryScorer for the pair: idf and average field length
	// as bleve computes them, and weight its queryWeight (boost × idf ×
	// queryNorm).
	idf, avg, weight float64
	// max bounds score over every document.
	max float64
	// driver marks a list whose documents are candidates: every text
	// list, or only the rare terms' lists of a common-terms query (see
	// textQuery).
	driver bool
}

// openPostings opens the list of term in field, with frequencies and
// norms when exact, and moves to its first document.
func openPostings(ctx context.Context, r index.IndexReader, term, field string, exact bool) (*postings, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, exact, exact, false)
	if err != nil {
		return nil, err
	}
	p := &postings{term: term, field: field, tfr: tfr, exact: exact}
	if err := p.next(); err != nil {
		_ = tfr.Close()
		return nil, err
	}
	return p, nil
}

func (p *postings) next() error {
	d, err := p.tfr.Next(&p.tfd)
	return p.at(d, err)
}

// advance moves to the first document at or after doc. A list never
// moves back: bleve's readers restart from the beginning for that.
func (p *postings) advance(doc uint64) error {
	if p.doc >= doc {
		return nil
	}
	p.buf = index.NewIndexInternalID(p.buf, doc)
	d, err := p.tfr.Advance(p.buf, &p.tfd)
	return p.at(d, err)
}

func (p *postings) at(d *index.TermFieldDoc, err error) error {
	if err != nil {
		return err
	}
	if d == nil {
		p.doc = exhausted
		return nil
	}
	p.doc = d.ID.Value()
	return nil
}

// score is bleve's score of the current document for this pair
// (scorer.TermQueryScorer: BM25 when the field has an average length,
// tf-idf otherwise), computed the same way. Exact lists only.
func (p *postings) score() float64 {
	tf := math.Sqrt(float64(p.tfd.Freq))
	var s float64
	if p.avg > 0 {
		fieldLength := 1 / (p.tfd.Norm * p.tfd.Norm)
		s = p.idf * (tf * search.BM25_k1) /
			(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/p.avg)))
	} else {
		s = tf * p.tfd.Norm * p.idf
	}
	return s * p.weight
}

// saturationBound bounds BM25's term-frequency part,
// tf·k1 / (tf + k1·(1-b+b·len/avg)) with tf = √freq, over every
// posting. A field holds its term at most len times (freq ≤ len, the
// field's length in tokens), so len ≥ tf², and the bound is the maximum
// over tf ≥ 1 of tf·k1 / (tf + k1·(1-b) + k1·b·tf²/avg), reached at
// tf = √(avg·(1-b)/b). The index stores len rounded (as a float32
// norm), hence the margin normSlack. Below k1, the bound for any length.
func saturationBound(avg float64) float64 {
	k1, b := search.BM25_k1, search.BM25_b
	c := b * (1 - normSlack) / avg
	if c <= 0 {
		return k1
	}
	tf := max(1, math.Sqrt((1-b)/c))
	return k1 * tf / (tf + k1*(1-b) + k1*c*tf*tf) * (1 + normSlack)
}

// termIDF is bleve's idf of a term in a field (scorer.NewTermQueryScorer).
func termIDF(avg float64, n, df uint64) float64 {
	if avg > 0 {
		return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
	}
	return 1.0 + math.Log(float64(n)/float64(df+1.0))
}

// fieldStats are bleve's BM25 statistics of a field
// (searcher.bm25ScoreMetrics): the document count, and the field's
// "average length", the number of distinct terms per document rounded
// up.
func fieldStats(r index.IndexReader, field string) (n uint64, avg float64, err error) {
	if n, err = r.DocCount(); err != nil {
		return 0, 0, err
	}
	card := 0
	if bm, ok := r.(index.BM25Reader); ok {
		if card, err = bm.FieldCardinality(field); err != nil {
			return 0, 0, err
		}
	}
	if n == 0 && card == 0 {
		return 0, 0, nil
	}
	return n, math.Ceil(float64(card) / float64(n)), nil
}
