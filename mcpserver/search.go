package mcpserver

import (
	"context"
	"math"
	"net/url"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/service"
)

// search runs the knowledge search of the A2A knowledge-search skill. A
// bearer token changes nothing here: searches are anonymous and count
// against the caller's address.
func (t *tools) search(ctx context.Context, in SearchInput) (SearchOutput, error) {
	c := service.Caller{Addr: callerOf(ctx).Addr}
	res, err := t.d.Search.Search(ctx, c, knowledge.Query{
		Text: in.Query, Limit: in.Limit, Kind: in.Kind, Product: in.Product, Environment: in.Environment,
	})
	if err != nil {
		return SearchOutput{}, t.fail(ctx, err)
	}
	out := SearchOutput{Results: make([]SearchResult, 0, len(res.Hits)+len(res.Discussions))}
	for _, h := range res.Hits {
		out.Results = append(out.Results, t.recordResult(h))
	}
	for _, d := range res.Discussions {
		out.Results = append(out.Results, t.discussionResult(d))
	}
	return out, nil
}

// recordResult maps a record hit; its url is the record's kfa page, and
// the record's own link is sourceUrl.
func (t *tools) recordResult(h knowledge.Hit) SearchResult {
	r := SearchResult{
		ID: h.ID, Title: h.Title, URL: t.recordURL(h.ID), Snippet: h.Snippet, Source: SourceRecord,
		Score: math.Round(h.Score*1e4) / 1e4,
		Kind:  h.Kind, Product: h.Product, Environment: h.Environment, SourceURL: h.URL,
	}
	if !h.UpdatedAt.IsZero() {
		r.UpdatedAt = knowledge.FormatTime(h.UpdatedAt)
	}
	return r
}

// discussionResult maps a related answered discussion.
func (t *tools) discussionResult(d knowledge.RelatedDiscussion) SearchResult {
	n := d.ReplyCount
	return SearchResult{
		ID: d.ID, Title: d.Title, URL: t.discussionURL(d.ID), Snippet: d.Snippet, Source: SourceDiscussion,
		Status: "answered", ReplyCount: &n,
	}
}

// recordURL and discussionURL are the web view's pages.
func (t *tools) recordURL(id string) string {
	return t.d.PublicURL + "/records/" + url.PathEscape(id)
}

func (t *tools) discussionURL(id string) string {
	return t.d.PublicURL + "/discussions/" + url.PathEscape(id)
}
