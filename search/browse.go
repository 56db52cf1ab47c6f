package search

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
)

// maxFacets bounds the kinds and the products a browse page lists.
const maxFacets = 50

// Browse lists the records, newest first, narrowed by q's kind and
// product (the keyword fields searches filter by, so case is ignored),
// a page at a time; the page also counts the records by kind and by
// product, for narrowing. Records are in the index from the start (a new
// index indexes them before it is ready), so no store is read.
func (x *Index) Browse(ctx context.Context, q knowledge.BrowseQuery) (knowledge.BrowsePage, error) {
	page := knowledge.BrowsePage{Records: []knowledge.BrowseItem{}}
	limit := q.Limit
	if limit == 0 {
		limit = knowledge.DefaultBrowseSize
	}
	if limit < 1 || limit > knowledge.MaxBrowseSize {
		return page, input.Errorf("pageSize", "must be between 1 and %d", knowledge.MaxBrowseSize)
	}
	var after []string
	if q.After != "" {
		var err error
		if after, err = decodeCursor(q.After); err != nil {
			return page, err
		}
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.rec == nil {
		return page, ErrClosed
	}
	records := bleve.NewTermQuery(string(knowledge.SourceRecord))
	records.SetField(fSource)
	must := []query.Query{records}
	for _, f := range []struct{ field, value string }{{fKind, q.Kind}, {fProduct, q.Product}} {
		if f.value == "" {
			continue
		}
		tq := bleve.NewTermQuery(strings.ToLower(f.value))
		tq.SetField(f.field)
		must = append(must, tq)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(must...), limit+1, 0, false)
	req.SortBy([]string{"-" + fUpdatedMS, "_id"})
	req.Fields = []string{fTitle, fKind, fProduct, fEnv, fUpdated, fBody}
	if after != nil {
		req.SearchAfter = after
	}
	res, err := x.rec.SearchInContext(ctx, req)
	if err != nil {
		return page, fmt.Errorf("search: browse records: %w", err)
	}
	page.Total = int(res.Total)
	for i, h := range res.Hits {
		if i == limit {
			page.Next = encodeCursor(res.Hits[i-1].Sort)
			break
		}
		str := func(name string) string { s, _ := h.Fields[name].(string); return s }
		it := knowledge.BrowseItem{ID: h.ID, Title: str(fTitle), Kind: str(fKind), Product: str(fProduct),
			Environment: str(fEnv), Snippet: leadSnippet(str(fBody))}
		it.UpdatedAt, _ = time.Parse(time.RFC3339Nano, str(fUpdated))
		page.Records = append(page.Records, it)
	}
	if page.Kinds, page.Products, err = x.facets(ctx, records); err != nil {
		return page, err
	}
	return page, nil
}

// facets counts every record by kind and by product.
func (x *Index) facets(ctx context.Context, records query.Query) (kinds, products []knowledge.Facet, err error) {
	req := bleve.NewSearchRequestOptions(records, 0, 0, false)
	req.AddFacet(fKind, bleve.NewFacetRequest(fKind, maxFacets))
	req.AddFacet(fProduct, bleve.NewFacetRequest(fProduct, maxFacets))
	res, err := x.rec.SearchInContext(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("search: count records by kind and product: %w", err)
	}
	list := func(name string) []knowledge.Facet {
		out := []knowledge.Facet{}
		if f := res.Facets[name]; f != nil && f.Terms != nil {
			for _, t := range f.Terms.Terms() {
				out = append(out, knowledge.Facet{Value: t.Term, Count: t.Count})
			}
		}
		return out
	}
	return list(fKind), list(fProduct), nil
}

var errCursor = errors.New("not a cursor of this record listing")

// encodeCursor makes a hit's sort values a page cursor.
func encodeCursor(sort []string) string {
	b, _ := json.Marshal(sort)
	return base64.RawURLEncoding.EncodeToString(b)
}

// maxCursorLen bounds a cursor, in characters: encodeCursor's form of a
// time and a record id (at most 128 bytes) is far shorter, and a longer
// one is not decoded at all.
const maxCursorLen = 512

// decodeCursor reads encodeCursor's form: the sort values of the record
// the page comes after (its update time and id).
func decodeCursor(s string) ([]string, error) {
	if len(s) > maxCursorLen {
		return nil, input.Errorf("pageToken", "%v", errCursor)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var sort []string
	if err == nil {
		err = json.Unmarshal(b, &sort)
	}
	if err != nil || len(sort) != 2 {
		return nil, input.Errorf("pageToken", "%v", errCursor)
	}
	return sort, nil
}
