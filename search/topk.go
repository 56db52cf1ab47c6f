package search

import (
	"context"
	"fmt"
	"math"
	"slices"

	index "github.com/blevesearch/bleve_index_api"
)

// Top-k pruning. bleve scores every document a query matches, and a
// query of common words matches nearly every document: at 100,000
// records that was most of a search's time, to keep 20. topDocs finds
// the documents that can be among the k best without scoring the rest,
// by MaxScore (Turtle and Flood): each (term, field) posting list has an
// upper bound of what it adds to a score, and once k documents are
// held, the lists whose bounds together cannot lift a document to the
// k-th score stop proposing documents; they are only probed at the
// documents the other lists propose, and a document is dropped as soon
// as what it could still reach falls short.
//
// The long lists of common words weigh almost nothing (a word in most
// bodies has an idf near 0) yet are the costliest to read with term
// frequencies, which bleve decodes one posting at a time up to the one
// asked for. Those whose bounds together stay under cheapShare of the
// largest are read for membership only, which skips ahead cheaply: a
// document's score is then known within an interval, and every
// document whose upper end reaches the k-th best lower end is kept.
//
// The scores are bleve's (see postings.score), so the documents kept
// hold those bleve would rank first; bleve then scores just them (with
// their term locations), which keeps its scores and its order exact.

// pruneSlack is the relative margin kept below the k-th score: a
// document whose score is that close is kept, so that rounding (bleve
// may add the same numbers in another order) never drops one that
// bleve ranks in.
const pruneSlack = 1e-9

// cheapShare bounds the lists read for membership only: together, their
// bounds stay under this share of the largest list's bound, so the
// intervals they leave are narrow.
const cheapShare = 0.02

// keywordFilter is an exact filter: the keyword term the field must hold.
type keywordFilter struct{ field, term string }

// scored is a document and the interval its score lies in.
type scored struct {
	doc    uint64
	lo, hi float64
}

// pruner runs one top-k search.
type pruner struct {
	k       int
	pairs   int         // the query's (term, field) pairs: coord's denominator
	lists   []*postings // the lists with postings: non-drivers first, then by bound
	filters []*postings
	top     []scored // the k best lower ends, best first; ties in document order
	near    []scored // passed over, whose upper end reached the threshold then
	// essential are the driver lists that propose documents; probes the
	// others, highest bound first, and probeMax the sum of their bounds.
	essential, probes []*postings
	probeMax          float64
	// scoredDocs counts the documents scored in full: what pruning
	// saved shows against the documents the query matches.
	scoredDocs int
}

// topDocs returns the external ids of the documents that can be among
// the k best matches of textQuery(ts, common) within the filters: the k
// best, and those whose score may reach the k-th. It reads the postings
// through r.
func topDocs(ctx context.Context, r index.IndexReader, ts []string, common map[string]bool, filters []keywordFilter, k int) ([]string, *pruner, error) {
	p := &pruner{k: k, pairs: len(ts) * len(textFields)}
	defer p.close()
	ok, err := p.open(ctx, r, ts, common, filters)
	if err != nil || !ok {
		return nil, p, err
	}
	if err := p.run(ctx); err != nil {
		return nil, p, err
	}
	var ids []string
	buf := make(index.IndexInternalID, 8)
	for _, s := range p.result() {
		buf.SetValue(s.doc)
		id, err := r.ExternalID(buf)
		if err != nil {
			return nil, p, fmt.Errorf("search: id of document %d: %w", s.doc, err)
		}
		ids = append(ids, id)
	}
	return ids, p, nil
}

// open reads the lists and their weights as bleve would for the query;
// false when nothing can match.
func (p *pruner) open(ctx context.Context, r index.IndexReader, ts []string, common map[string]bool, filters []keywordFilter) (bool, error) {
	rare := 0
	for _, t := range ts {
		if !common[t] {
			rare++
		}
	}
	mixed := rare > 0 && rare < len(ts)
	var all []*postings
	sumSq := 0.0
	for _, f := range textFields {
		n, avg, err := fieldStats(r, f.name)
		if err != nil {
			return false, err
		}
		for _, t := range ts {
			l, err := openPostings(ctx, r, t, f.name, false)
			if err != nil {
				return false, err
			}
			p.lists = append(p.lists, l) // closed by close, also when empty
			l.avg, l.idf, l.driver = avg, termIDF(avg, n, l.tfr.Count()), !mixed || !common[t]
			l.weight = f.boost * l.idf // squared into queryNorm below
			sumSq += l.weight * l.weight
			all = append(all, l)
		}
	}
	qnorm := 1.0 / math.Sqrt(sumSq)
	largest := 0.0
	for _, l := range all {
		l.weight *= qnorm
		l.max = unbounded
		if l.avg > 0 {
			l.max = l.idf * saturationBound(l.avg) * l.weight
		}
		largest = max(largest, l.max)
	}
	p.lists = slices.DeleteFunc(p.lists, func(l *postings) bool {
		if l.doc == exhausted {
			_ = l.tfr.Close()
			return true
		}
		return false
	})
	slices.SortStableFunc(p.lists, func(a, b *postings) int { return cmpFloat(a.max, b.max) })
	cheap := 0.0
	for i, l := range p.lists {
		if cheap += l.max; cheap > cheapShare*largest {
			// The rest are scored: read them with frequencies and norms.
			for _, l := range p.lists[i:] {
				e, err := openPostings(ctx, r, l.term, l.field, true)
				if err != nil {
					return false, err
				}
				_ = l.tfr.Close()
				l.tfr, l.tfd, l.doc, l.exact = e.tfr, e.tfd, e.doc, true
			}
			break
		}
	}
	for _, f := range filters {
		l, err := openPostings(ctx, r, f.term, f.field, false)
		if err != nil {
			return false, err
		}
		p.filters = append(p.filters, l)
		if l.doc == exhausted {
			return false, nil
		}
	}
	// Non-drivers first: they propose no document, so they are probed
	// whatever the threshold.
	slices.SortStableFunc(p.lists, func(a, b *postings) int {
		if a.driver != b.driver {
			if a.driver {
				return 1
			}
			return -1
		}
		return cmpFloat(a.max, b.max)
	})
	p.split()
	return true, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (p *pruner) close() {
	for _, l := range p.lists {
		_ = l.tfr.Close()
	}
	for _, l := range p.filters {
		_ = l.tfr.Close()
	}
}

// threshold is the score a document must be able to reach to matter:
// pruneSlack below the k-th best lower end once there are k; -1
// (anything) before.
func (p *pruner) threshold() float64 {
	if len(p.top) < p.k {
		return -1
	}
	return p.top[p.k-1].lo * (1 - pruneSlack)
}

// split divides the lists into essential and probed ones for the
// current threshold: the longest prefix of p.lists (non-drivers first,
// then by bound) that cannot lift a document matching only it to the
// threshold stops proposing documents, and so do the non-drivers.
func (p *pruner) split() {
	th := p.threshold()
	cut, sum := 0, 0.0
	for i, l := range p.lists {
		sum += l.max
		if sum*(float64(i+1)/float64(p.pairs)) >= th {
			break
		}
		cut = i + 1
	}
	p.essential, p.probes, p.probeMax = p.essential[:0], p.probes[:0], 0
	for i, l := range p.lists {
		if i >= cut && l.driver {
			p.essential = append(p.essential, l)
			continue
		}
		p.probes = append(p.probes, l)
		p.probeMax += l.max
	}
	slices.SortStableFunc(p.probes, func(a, b *postings) int { return cmpFloat(b.max, a.max) })
}

// run walks the essential lists in document order.
func (p *pruner) run(ctx context.Context) error {
	for steps := 0; ; steps++ {
		if steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		doc := uint64(exhausted)
		for _, l := range p.essential {
			doc = min(doc, l.doc)
		}
		if doc == exhausted {
			return nil
		}
		target, err := p.filtersAt(doc)
		if err != nil {
			return err
		}
		if target == exhausted {
			return nil
		}
		if target == doc {
			if err := p.scoreDoc(doc); err != nil {
				return err
			}
		}
		for _, l := range p.essential {
			if l.doc == doc && target == doc {
				err = l.next()
			} else {
				err = l.advance(target)
			}
			if err != nil {
				return err
			}
		}
	}
}

// filtersAt moves the filters to doc and returns it when every filter
// holds it, or else the first document they might all hold.
func (p *pruner) filtersAt(doc uint64) (uint64, error) {
	target := doc
	for _, f := range p.filters {
		if err := f.advance(target); err != nil {
			return 0, err
		}
		target = max(target, f.doc)
	}
	return target, nil
}

// scoreDoc scores doc, which an essential list holds, unless it cannot
// reach the threshold, and offers it. The score is bleve's: the sum over
// the lists holding doc, times the share of the pairs they are (coord).
func (p *pruner) scoreDoc(doc uint64) error {
	th := p.threshold()
	lo, hi, matched := 0.0, 0.0, 0
	add := func(l *postings) {
		matched++
		if l.exact {
			s := l.score()
			lo, hi = lo+s, hi+s
			return
		}
		hi += l.max
	}
	for _, l := range p.essential {
		if l.doc == doc {
			add(l)
		}
	}
	rest, left := p.probeMax, len(p.probes)
	for _, l := range p.probes {
		if (hi+rest)*(float64(matched+left)/float64(p.pairs)) < th {
			return nil
		}
		if err := l.advance(doc); err != nil {
			return err
		}
		if l.doc == doc {
			add(l)
		}
		rest -= l.max
		left--
	}
	p.scoredDocs++
	coord := float64(matched) / float64(p.pairs)
	if hi*coord >= th {
		p.offer(scored{doc: doc, lo: lo * coord, hi: hi * coord})
	}
	return nil
}

// offer keeps s among the k best lower ends, or near them. Documents
// come in document order, so of equal scores the earlier stays first,
// as in bleve.
func (p *pruner) offer(s scored) {
	if len(p.top) == p.k && s.lo <= p.top[p.k-1].lo {
		p.near = append(p.near, s)
		return
	}
	i, _ := slices.BinarySearchFunc(p.top, s.lo, func(e scored, v float64) int {
		if e.lo >= v {
			return -1
		}
		return 1
	})
	p.top = slices.Insert(p.top, i, s)
	if len(p.top) < p.k {
		return
	}
	if len(p.top) > p.k {
		p.near = append(p.near, p.top[p.k])
		p.top = p.top[:p.k]
	}
	p.split()
	if len(p.near) > 4*p.k {
		th := p.threshold()
		p.near = slices.DeleteFunc(p.near, func(s scored) bool { return s.hi < th })
	}
}

// result is the k best lower ends and every document whose upper end
// reaches the k-th of them: the k best scores are among these.
func (p *pruner) result() []scored {
	th := p.threshold()
	out := slices.Clone(p.top)
	for _, s := range p.near {
		if s.hi >= th {
			out = append(out, s)
		}
	}
	return out
}
