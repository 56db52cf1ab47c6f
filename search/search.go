package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/collector"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/trust"
)

// candidates is how many top-scored documents are checked for coverage
// to fill a page of at most knowledge.MaxLimit hits; filteredCandidates
// how many when a trust filter (minScore, minTrust, minReputation) may
// leave some out. Every one is ranked with its stored signals, so the
// work stays linear in them.
const (
	candidates         = 4 * knowledge.MaxLimit
	filteredCandidates = 10 * knowledge.MaxLimit
)

// Search answers q from the index: records, answered discussions, and
// open discussions that ask the same question, best first. It reads only
// the index, never the store. A query whose text has no searchable term
// (only stop words or punctuation), or that nothing answers (see
// relevance.go), answers no hits: the honest miss. When nothing holds the
// query as typed, its terms that no document holds are also searched as
// the closest indexed spelling (one edit away), and the corrected query's
// hits are the answer when they hold more of it (see corrections for a
// query none of whose terms is known); Result.CorrectedQuery then says
// which query was answered.
func (x *Index) Search(ctx context.Context, q knowledge.Query) (knowledge.Result, error) {
	limit := q.Limit
	if limit < 1 {
		limit = knowledge.DefaultLimit
	}
	limit = min(limit, knowledge.MaxLimit)
	res := knowledge.Result{Hits: []knowledge.Hit{}}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.rec == nil {
		return res, ErrClosed
	}
	ts := x.an.terms(q.Text)
	if len(ts) == 0 {
		return res, nil
	}
	r, err := reader(x.rec)
	if err != nil {
		return res, fmt.Errorf("search: open a reader: %w", err)
	}
	defer r.Close()
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	s := &run{x: x, r: r, filters: map[string]string{fKind: q.Kind, fProduct: q.Product, fEnv: q.Environment}, q: q, now: now,
		n: candidates}
	if q.Filtered() {
		s.n = filteredCandidates
	}
	s.keywords = x.an.keywordFilters(s.filters)
	hits, st, err := s.find(ctx, ts, limit)
	if err != nil {
		return res, err
	}
	if best := bestCoverage(hits); best < fullCoverage && len(st.unknown) > 0 {
		// Nothing holds the whole query: a term no document holds may be
		// misspelt. The corrected query wins when it finds more of itself.
		fixed, corr, err := corrections(ctx, r, ts, st.unknown)
		if err != nil {
			return res, fmt.Errorf("search: spelling: %w", err)
		}
		if len(corr) > 0 {
			alt, _, err := s.find(ctx, fixed, limit)
			if err != nil {
				return res, err
			}
			if len(alt) > 0 && bestCoverage(alt) > best {
				hits = alt
				res.Corrections, res.CorrectedQuery = x.spelt(q.Text, corr, alt)
			}
		}
	}
	for _, c := range hits {
		h, err := x.hitOf(c, q.Research, now)
		if err != nil {
			return res, err
		}
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

func reader(idx bleve.Index) (index.IndexReader, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	return adv.Reader()
}

// run is one search's state: the index, a reader for term statistics
// and postings, and the filters.
type run struct {
	x        *Index
	r        index.IndexReader
	filters  map[string]string
	keywords []keywordFilter // filters, as the terms the keyword fields hold
	q        knowledge.Query // its trust filters
	now      time.Time       // when trust is read
	n        int             // how many candidates are ranked
}

// candidate is a document the query matched, with what decides whether
// it is a hit and where it ranks.
type candidate struct {
	dm   *search.DocumentMatch // first-pass score, term locations
	cov  float64
	doc  stored
	sig  signalsDoc
	disc bool
	open bool
}

// find returns up to limit hits for the terms ts, best first (see
// relevance.go), and the terms' statistics.
func (s *run) find(ctx context.Context, ts []string, limit int) ([]candidate, termStats, error) {
	st, err := stats(ctx, s.r, ts)
	if err != nil {
		return nil, st, fmt.Errorf("search: term weights: %w", err)
	}
	cands, err := s.candidates(ctx, ts, st, s.keywords)
	if err != nil {
		return nil, st, err
	}
	answerable, partials := false, false
	for _, c := range cands {
		if !c.open {
			answerable = answerable || strict(c.dm.Score, c.cov)
			partials = partials || partial(c.cov)
		}
	}
	if !answerable && partials && hasFilter(s.filters) {
		// Nothing within the filters answers on its own: the query is
		// answerable if something outside them does.
		all, err := s.candidates(ctx, ts, st, nil)
		if err != nil {
			return nil, st, err
		}
		for _, c := range all {
			answerable = answerable || !c.open && strict(c.dm.Score, c.cov)
		}
	}
	var out []candidate
	for _, c := range cands {
		ok := answerable && (strict(c.dm.Score, c.cov) || partial(c.cov))
		if c.open {
			ok = false
			if c.cov >= fullCoverage {
				qcov, err := questionCoverage(ctx, s.r, s.x.an, c.doc.fields[fTitle], ts)
				if err != nil {
					return nil, st, err
				}
				ok = asksClosely(c.cov, qcov)
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	// Beside an open discussion that asks the question, a match of a word
	// or two is no answer: the agent should join the discussion.
	asked := 0.0
	for _, c := range out {
		if c.open {
			asked = max(asked, c.cov)
		}
	}
	out = slices.DeleteFunc(out, func(c candidate) bool { return !c.open && c.cov < minShareOfAsked*asked || !s.passes(c) })
	slices.SortStableFunc(out, byRank)
	return out[:min(len(out), limit)], st, nil
}

// byRank orders hits (docs/search.md, "Ranking"). Among hits that answer
// the query alike (on their own, or as a good part of it), an answered
// discussion whose
// asker accepted a reply ranks first, then the more trusted (trust:
// verifications first, then votes, recent ones weighing more, compared
// by its weight at trust.Epoch, which orders as trust now does), then
// the more relevant (score times coverage: of two matches, the one that
// holds more of the question ranks first, even when the other holds its
// few words in a title), then this server's own documents before those
// followed from its peers, then the more recent. Trust never lifts a
// partial match above an answer: an accepted answer to another question
// that shares a word or two with this one is not this one's answer.
func byRank(a, b candidate) int {
	if c := cmp.Compare(b.whole(), a.whole()); c != 0 {
		return c
	}
	if c := cmp.Compare(b.accepted(), a.accepted()); c != 0 {
		return c
	}
	if c := cmp.Compare(b.sig.Weight, a.sig.Weight); c != 0 {
		return c
	}
	if c := cmp.Compare(b.relevance(), a.relevance()); c != 0 {
		return c
	}
	// At equal relevance, this server's own documents rank before those
	// followed from its peers.
	if c := cmp.Compare(a.followed(), b.followed()); c != 0 {
		return c
	}
	return b.recent().Compare(a.recent())
}

// k is how many candidates s ranks.
func (s *run) k() int {
	if s.n > 0 {
		return s.n
	}
	return candidates
}

// whole is 1 when c is an answer on its own (strict), 0 when it is
// listed for holding a good part of an answerable query.
func (c candidate) whole() int {
	if strict(c.dm.Score, c.cov) {
		return 1
	}
	return 0
}

// accepted is 1 for an answered discussion with an accepted reply.
func (c candidate) accepted() int {
	if c.disc && !c.open && c.doc.fields[fAccepted] != "" {
		return 1
	}
	return 0
}

// recent is when c last changed: a record's update, a discussion's
// answer (its question while open).
func (c candidate) recent() time.Time {
	f := c.doc.fields
	v := f[fUpdated]
	if c.disc {
		if v = f[fAnswered]; v == "" {
			v = f[fCreated]
		}
	}
	t, _ := time.Parse(time.RFC3339Nano, v)
	return t
}

// passes reports whether c reaches the query's trust filters: its vote
// score, its trust now, its author's reputation (a record, which has no
// author, passes that one).
func (s *run) passes(c candidate) bool {
	q := s.q
	if q.MinScore != nil && c.sig.Up-c.sig.Down < *q.MinScore {
		return false
	}
	if q.MinTrust != nil && trust.TrustAt(c.sig.Weight, s.now) < *q.MinTrust {
		return false
	}
	if q.MinReputation != nil && c.disc && s.x.reputation(c.sig.Author) < *q.MinReputation {
		return false
	}
	return true
}

// bestCoverage is the highest coverage among hits (0 for none).
func bestCoverage(hits []candidate) float64 {
	best := 0.0
	for _, c := range hits {
		best = max(best, c.cov)
	}
	return best
}

// acceptedBoost raises an answered discussion whose asker accepted a
// reply: of two that match alike, the accepted answer ranks first.
const acceptedBoost = 1.1

// followed is 1 for a document followed from a peer, 0 for a local one.
func (c candidate) followed() int {
	if isFollowedID(strings.TrimPrefix(c.dm.ID, discPrefix)) {
		return 1
	}
	return 0
}

// relevance is what hits are ranked by, and the score they show.
func (c candidate) relevance() float64 {
	r := c.dm.Score * c.cov
	if c.disc && !c.open && c.doc.fields[fAccepted] != "" {
		r *= acceptedBoost
	}
	return r
}

// candidates returns the best matches of the terms ts within the
// keyword filters fs, best first, each with the locations of the terms
// it matched and its coverage under the term weights.
//
// topDocs finds the documents that can be among the best without
// scoring every match; bleve then scores just those, with their term
// locations. The document-id clause scores nothing (boost 0), so the
// scores and their order are those of the text query alone; the filters
// score nothing either, and topDocs kept only documents within them, so
// they are left out of that query (their postings would be walked for
// nothing).
func (s *run) candidates(ctx context.Context, ts []string, st termStats, fs []keywordFilter) ([]candidate, error) {
	idx := s.x.rec
	ids, _, err := topDocs(ctx, s.r, ts, st.common, fs, s.k())
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	only := bleve.NewDocIDQuery(ids)
	only.SetBoost(0)
	hits, err := s.rank(ctx, bleve.NewConjunctionQuery(only, textQuery(ts, st.common)), s.k())
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := make([]candidate, 0, len(hits))
	for _, dm := range hits {
		c := candidate{dm: dm, cov: coverage(dm, st.weight), disc: isDiscussionDoc(dm.ID)}
		if c.doc, err = load(idx, dm.ID); err != nil {
			return nil, err
		}
		c.sig = decodeSignals(c.doc.fields[fSignals])
		if c.disc {
			c.open = c.doc.fields[fStatus] != knowledge.StatusAnswered
		}
		out = append(out, c)
	}
	return out, nil
}

// rank returns q's n best matches with their term locations, best
// first, as bleve's SearchInContext would, but through the run's reader:
// the documents topDocs found are scored in the same snapshot of the
// index, with the same statistics.
func (s *run) rank(ctx context.Context, q query.Query, n int) ([]*search.DocumentMatch, error) {
	m := s.x.rec.Mapping()
	model := index.DefaultScoringModel
	if impl, ok := m.(*mapping.IndexMappingImpl); ok && impl.ScoringModel != "" {
		model = impl.ScoringModel
	}
	ctx = context.WithValue(ctx, search.GetScoringModelCallbackKey, search.GetScoringModelCallbackFn(func() string { return model }))
	sr, err := q.Searcher(ctx, s.r, m, search.SearcherOptions{IncludeTermVectors: true})
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	coll := collector.NewTopNCollector(n, 0, search.SortOrder{&search.SortScore{Desc: true}})
	if err := coll.Collect(ctx, sr, s.r); err != nil {
		return nil, err
	}
	return coll.Results(), nil
}

// discPrefix starts the index id of a discussion: record ids cannot hold
// a colon, so the two never collide.
const discPrefix = "d:"

func discussionDocID(id string) string { return discPrefix + id }

func isDiscussionDoc(docID string) bool { return strings.HasPrefix(docID, discPrefix) }
