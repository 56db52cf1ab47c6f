package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
)

// runSearch is the knowledge-search skill: a direct Message, on a stream
// as without one.
func (s *Service) runSearch(ctx context.Context, c Caller, req *a2a.SendMessageRequest, in msgInput, _ bool) (answer, error) {
	res, err := s.search(ctx, c, req.Message, in)
	if err != nil {
		return answer{}, err
	}
	return answer{message: res.Message}, nil
}

// search runs knowledge-search and answers with a direct Message.
func (s *Service) search(ctx context.Context, c Caller, m *a2a.Message, in msgInput) (a2a.SendMessageResponse, error) {
	q := knowledge.Query{Text: in.text, Limit: knowledge.DefaultLimit, Research: in.action == "research"}
	if in.data != nil {
		query, err := str(in.data, "query")
		if err != nil {
			return a2a.SendMessageResponse{}, err
		}
		if query != "" {
			q.Text = query
		}
		if raw, ok := in.data["limit"]; ok && !bytes.Equal(raw, []byte("null")) {
			// A JSON number only: json.Number alone would also take "3".
			var v int64
			err := json.Unmarshal(raw, &v)
			if err != nil || v < 1 || v > knowledge.MaxLimit {
				return a2a.SendMessageResponse{}, a2a.BadParam("data.limit", "must be an integer from 1 to %d", knowledge.MaxLimit)
			}
			q.Limit = int(v)
		}
		for _, f := range []struct {
			key string
			dst *string
		}{{"kind", &q.Kind}, {"product", &q.Product}, {"environment", &q.Environment}} {
			v, err := str(in.data, f.key)
			if err != nil {
				return a2a.SendMessageResponse{}, err
			}
			if err := validateFilter(f.key, v); err != nil {
				return a2a.SendMessageResponse{}, err
			}
			*f.dst = v
		}
	}
	q.Text = strings.TrimSpace(q.Text)
	if err := validateQuery(q.Text); err != nil {
		return a2a.SendMessageResponse{}, err
	}
	if s.deps.SearchRate != nil {
		if wait, ok := s.deps.SearchRate.Allow(c.limitKey()); !ok {
			return a2a.SendMessageResponse{}, &a2a.Error{
				Kind:       a2a.RateLimited,
				Message:    fmt.Sprintf("too many searches: the limit is %s per client", s.deps.SearchRate),
				RetryAfter: wait,
			}
		}
	}
	if s.deps.Search == nil {
		return a2a.SendMessageResponse{}, a2a.Errorf(a2a.Unavailable, "the search index is not loaded yet; try again shortly")
	}
	res, err := s.deps.Search.Search(ctx, q)
	if err != nil {
		return a2a.SendMessageResponse{}, fmt.Errorf("search: %w", err)
	}
	msg, err := s.searchAnswer(m, q, res)
	if err != nil {
		return a2a.SendMessageResponse{}, err
	}
	s.noteEmptyBase(ctx, msg, res)
	return a2a.SendMessageResponse{Message: msg}, nil
}

func validateQuery(q string) error {
	if q == "" {
		return a2a.BadParam("data.query", "must not be empty")
	}
	if n := len([]rune(q)); n > knowledge.MaxQueryLen {
		return a2a.BadParam("data.query", "%d characters, at most %d", n, knowledge.MaxQueryLen)
	}
	return nil
}

func validateFilter(key, v string) error {
	if v == "" {
		return nil
	}
	f := discussions.Filters{}
	switch key {
	case "kind":
		f.Kind = v
	case "product":
		f.Product = v
	case "environment":
		f.Environment = v
	}
	if err := f.Validate(); err != nil {
		return toA2A(err, "data.")
	}
	return nil
}

// searchAnswer is the direct Message: a one-line summary and the hits.
func (s *Service) searchAnswer(m *a2a.Message, q knowledge.Query, res knowledge.Result) (*a2a.Message, error) {
	type result struct {
		Query       string                        `json:"query"`
		Results     []knowledge.Hit               `json:"results"`
		Discussions []knowledge.RelatedDiscussion `json:"discussions,omitempty"`
	}
	hits := res.Hits
	if hits == nil {
		hits = []knowledge.Hit{}
	}
	data, err := json.Marshal(result{Query: q.Text, Results: hits, Discussions: res.Discussions})
	if err != nil {
		return nil, err
	}
	var summary string
	switch len(hits) {
	case 0:
		summary = fmt.Sprintf("No knowledge records match %q.", q.Text)
		if s.cfg.ContributorWrites {
			summary += " Nothing found; to ask the community, use the ask-network skill."
		}
	case 1:
		summary = fmt.Sprintf("Found 1 record for %q: %s.", q.Text, hits[0].Title)
	default:
		titles := make([]string, len(hits))
		for i, h := range hits {
			titles[i] = h.Title
		}
		summary = fmt.Sprintf("Found %d records for %q: %s.", len(hits), q.Text, strings.Join(titles, "; "))
	}
	contextID := m.ContextID
	if contextID == "" {
		contextID = ulid.Make().String()
	}
	return &a2a.Message{
		MessageID: ulid.Make().String(),
		ContextID: contextID,
		Role:      a2a.RoleAgent,
		Parts:     []a2a.Part{a2a.TextPart(summary), a2a.DataPart(data)},
	}, nil
}
