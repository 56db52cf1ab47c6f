package search

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/highlight"
	htmlhl "github.com/blevesearch/bleve/v2/search/highlight/highlighter/html"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/knowledge"
)

// candidates is how many top-scored documents are checked for coverage
// to fill a page of at most knowledge.MaxLimit hits.
const candidates = 4 * knowledge.MaxLimit

// Search answers q from the index. It reads only the index, never the
// store. A query whose text has no searchable term (only stop words or
// punctuation), or that no document covers well enough, answers no hits:
// the honest miss.
func (x *Index) Search(ctx context.Context, q knowledge.Query) (knowledge.Result, error) {
	limit := q.Limit
	if limit < 1 {
		limit = knowledge.DefaultLimit
	}
	limit = min(limit, knowledge.MaxLimit)
	res := knowledge.Result{Hits: []knowledge.Hit{}}
	ts := terms(x.recMapping, q.Text)
	if len(ts) == 0 {
		return res, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.rec == nil {
		return res, ErrClosed
	}
	// Term weights come from the records, the larger body of text: they
	// judge the discussions too.
	st, err := stats(ctx, x.rec, ts, recordFields)
	if err != nil {
		return res, fmt.Errorf("search: term weights: %w", err)
	}
	bq := filtered(x.recMapping, textQuery(ts, recordFields, st.common), map[string]string{
		fKind: q.Kind, fProduct: q.Product, fEnv: q.Environment,
	})
	dms, err := ranked(ctx, x.rec, bq, st.weight, limit)
	if err != nil {
		return res, fmt.Errorf("search: records: %w", err)
	}
	for _, dm := range dms {
		h, err := x.hitOf(dm, q.Research)
		if err != nil {
			return res, err
		}
		res.Hits = append(res.Hits, h)
	}
	if q.Research && x.disc != nil {
		if res.Discussions, err = x.searchDiscussions(ctx, ts, st.weight); err != nil {
			return res, err
		}
	}
	return res, nil
}

// ranked runs q and returns up to limit of its best matches that are
// relevant under the term weights w, best first, each with the locations
// of the terms it matched.
//
// Term locations are costly to read, so the first pass only scores; the
// second reads locations for the few best candidates alone. The first
// pass's order and scores are kept.
func ranked(ctx context.Context, idx bleve.Index, q query.Query, w map[string]float64, limit int) ([]*search.DocumentMatch, error) {
	sr, err := idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, candidates, 0, false))
	if err != nil {
		return nil, err
	}
	if len(sr.Hits) == 0 {
		return nil, nil
	}
	first := sr.Hits
	ids := make([]string, len(first))
	for i, dm := range first {
		ids[i] = dm.ID
	}
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(bleve.NewDocIDQuery(ids), q), len(ids), 0, false)
	req.IncludeLocations = true
	if sr, err = idx.SearchInContext(ctx, req); err != nil {
		return nil, err
	}
	located := make(map[string]*search.DocumentMatch, len(sr.Hits))
	for _, dm := range sr.Hits {
		located[dm.ID] = dm
	}
	var out []*search.DocumentMatch
	for _, dm := range first {
		loc, ok := located[dm.ID]
		if !ok { // deleted between the passes
			continue
		}
		if !relevant(dm.Score, coverage(loc, w)) {
			continue
		}
		loc.Score = dm.Score
		out = append(out, loc)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// stored reads the stored fields of a document and a highlighter for its
// matches.
type stored struct {
	doc    index.Document
	fields map[string]string
}

func load(idx bleve.Index, id string) (stored, error) {
	doc, err := idx.Document(id)
	if err != nil {
		return stored{}, fmt.Errorf("search: load document %s: %w", id, err)
	}
	s := stored{doc: doc, fields: map[string]string{}}
	if doc == nil {
		return s, nil
	}
	doc.VisitFields(func(f index.Field) {
		if _, seen := s.fields[f.Name()]; !seen { // tags repeat; only single values are read
			s.fields[f.Name()] = string(f.Value())
		}
	})
	return s, nil
}

// snippet is the best passage of the first field that matched, as plain
// text, or the start of the fallback field.
func (s stored) snippet(dm *search.DocumentMatch, fields []string, fallback string) string {
	hl, err := bleve.Config.Cache.HighlighterNamed(htmlhl.Name)
	if err == nil && s.doc != nil {
		for _, f := range fields {
			if len(dm.Locations[f]) == 0 {
				continue
			}
			if frag := bestFragment(hl, dm, s.doc, f); frag != "" {
				return plainSnippet(frag)
			}
		}
	}
	return leadSnippet(s.fields[fallback])
}

func bestFragment(hl highlight.Highlighter, dm *search.DocumentMatch, doc index.Document, f string) string {
	frags := hl.BestFragmentsInField(dm, doc, f, 1)
	if len(frags) == 0 {
		return ""
	}
	return frags[0]
}

func (x *Index) hitOf(dm *search.DocumentMatch, research bool) (knowledge.Hit, error) {
	s, err := load(x.rec, dm.ID)
	if err != nil {
		return knowledge.Hit{}, err
	}
	f := s.fields
	h := knowledge.Hit{
		ID: dm.ID, Title: f[fTitle], Kind: f[fKind], Product: f[fProduct], Environment: f[fEnv],
		Score: dm.Score, URL: f[fURL], Snippet: s.snippet(dm, []string{fBody}, fBody),
	}
	h.UpdatedAt, _ = time.Parse(time.RFC3339Nano, f[fUpdated])
	if research {
		h.Body = f[fBody]
	}
	return h, nil
}

// searchDiscussions finds up to MaxRelatedDisc answered discussions for
// the query terms, under the same coverage rule as records. The caller
// holds mu for reading.
func (x *Index) searchDiscussions(ctx context.Context, ts []string, w map[string]float64) ([]knowledge.RelatedDiscussion, error) {
	dms, err := ranked(ctx, x.disc, textQuery(ts, discussionFields, nil), w, knowledge.MaxRelatedDisc)
	if err != nil {
		return nil, fmt.Errorf("search: discussions: %w", err)
	}
	out := []knowledge.RelatedDiscussion{}
	for _, dm := range dms {
		s, err := load(x.disc, dm.ID)
		if err != nil {
			return nil, err
		}
		n, _ := strconv.Atoi(s.fields[fReplies])
		out = append(out, knowledge.RelatedDiscussion{
			ID: dm.ID, Title: s.fields[fTitle], ReplyCount: n,
			URL:     x.o.PublicURL + "/api/v1/discussions/" + url.PathEscape(dm.ID),
			Snippet: s.snippet(dm, []string{fAnswers, fBody}, fAnswers),
		})
	}
	return out, nil
}
