package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/knowledge"
)

// indexStatus is what a Searcher may also tell: how much it holds. The
// search index does; a Searcher without it never reports empty.
type indexStatus interface {
	Status(ctx context.Context) (knowledge.IndexStatus, error)
}

// emptyBaseSummary is the answer's text when the knowledge base holds
// nothing at all: a miss there says nothing about the query, and the
// operator needs to know what to do.
const emptyBaseSummary = "The knowledge base is empty: no records have been imported yet, so nothing can match. " +
	"An operator imports records with `kfa records import FILE.jsonl` (JSON Lines, one record per line; " +
	"kfa serve --seed-samples loads the sample records into an empty database)."

// noteEmptyBase rewrites the summary of a search answer that found
// nothing because the knowledge base is empty. A failure to read the
// index's status leaves the ordinary answer.
func (s *Service) noteEmptyBase(ctx context.Context, msg *a2a.Message, res knowledge.Result) {
	if len(res.Hits) > 0 || len(msg.Parts) == 0 {
		return
	}
	ix, ok := s.deps.Search.(indexStatus)
	if !ok {
		return
	}
	st, err := ix.Status(ctx)
	if err != nil || st.Records > 0 || st.Discussions > 0 {
		return
	}
	summary := emptyBaseSummary
	if s.cfg.ContributorWrites {
		summary += " To ask the community meanwhile, use the ask-network skill."
	}
	msg.Parts[0] = a2a.TextPart(summary)
}
