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
	res, err := t.d.Service.Search(ctx, c, knowledge.Query{
		Text: in.Query, Limit: in.Limit, Kind: in.Kind, Product: in.Product, Environment: in.Environment,
		MinScore: in.MinScore, MinTrust: in.MinTrust, MinReputation: in.MinReputation,
	})
	if err != nil {
		return SearchOutput{}, t.fail(ctx, err)
	}
	out := SearchOutput{Results: make([]SearchResult, 0, len(res.Hits)), CorrectedQuery: res.CorrectedQuery}
	for _, h := range res.Hits {
		out.Results = append(out.Results, resultOf(h))
	}
	return out, nil
}

// resultOf maps a hit: its url is its kfa page; a record's own link is
// sourceUrl.
func resultOf(h knowledge.Hit) SearchResult {
	r := SearchResult{
		ID: h.ID, Title: h.Title, URL: h.PageURL, Snippet: h.Snippet, Source: string(h.Source),
		Score: math.Round(h.Score*1e4) / 1e4,
		Kind:  h.Kind, Product: h.Product, Environment: h.Environment,
		Votes: h.Votes, Trust: math.Round(h.Trust*1e3) / 1e3,
		Verifications: SearchVerifications{Worked: h.Verifications.Worked, Failed: h.Verifications.Failed},
	}
	if !h.Verifications.LastWorkedAt.IsZero() {
		r.Verifications.LastWorkedAt = knowledge.FormatTime(h.Verifications.LastWorkedAt)
	}
	if a := h.Author; a != nil {
		r.Author = &SearchAuthor{ID: a.ID, Name: a.Name, Reputation: a.Reputation}
	}
	if h.Origin != nil {
		r.Origin = &Origin{Peer: h.Origin.Peer, URL: h.Origin.URL}
	}
	if h.Source == knowledge.SourceRecord {
		r.SourceURL = h.URL
		if !h.UpdatedAt.IsZero() {
			r.UpdatedAt = knowledge.FormatTime(h.UpdatedAt)
		}
		return r
	}
	n := h.ReplyCount
	r.Status, r.ReplyCount, r.AcceptedReplyID, r.AnswerReplyID = h.Status, &n, h.AcceptedReplyID, h.AnswerReplyID
	if !h.CreatedAt.IsZero() {
		r.CreatedAt = knowledge.FormatTime(h.CreatedAt)
	}
	if !h.AnsweredAt.IsZero() {
		r.AnsweredAt = knowledge.FormatTime(h.AnsweredAt)
	}
	return r
}

// recordURL and discussionURL are the web view's pages.
func (t *tools) recordURL(id string) string {
	return t.d.PublicURL + "/records/" + url.PathEscape(id)
}

func (t *tools) discussionURL(id string) string {
	return t.d.PublicURL + "/discussions/" + url.PathEscape(id)
}
