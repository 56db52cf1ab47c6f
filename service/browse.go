package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/knowledge"
)

// Browser lists the knowledge records a page at a time, narrowed by kind
// and product. The search index is one; a Searcher that is not answers
// BrowseRecords with Unavailable.
type Browser interface {
	Browse(ctx context.Context, q knowledge.BrowseQuery) (knowledge.BrowsePage, error)
}

// BrowseQuery is a page of the records browse, as a client wrote it.
type BrowseQuery struct {
	Kind, Product string
	PageSize      *int // nil for the default
	PageToken     string
}

// BrowseRecords lists the knowledge records, newest first, narrowed by
// kind and product, with how many records each kind and product has.
func (s *Service) BrowseRecords(ctx context.Context, q BrowseQuery) (knowledge.BrowsePage, error) {
	b, ok := s.deps.Search.(Browser)
	if !ok {
		return knowledge.BrowsePage{}, a2a.Errorf(a2a.Unavailable, "browsing the records needs the search index, which this process does not run")
	}
	size := 0
	if q.PageSize != nil {
		if *q.PageSize < 1 || *q.PageSize > knowledge.MaxBrowseSize {
			return knowledge.BrowsePage{}, a2a.BadParam("pageSize", "must be between 1 and %d", knowledge.MaxBrowseSize)
		}
		size = *q.PageSize
	}
	return b.Browse(ctx, knowledge.BrowseQuery{Kind: q.Kind, Product: q.Product, After: q.PageToken, Limit: size})
}
