package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/ratelimit"
)

// Search runs a knowledge search that does not arrive as an A2A message
// (the web view's search box, the MCP search tool): the same checks, the
// same per-caller search limit and the same index as the search skill,
// with field names that are the query's own (query, kind, product,
// environment, limit). A zero Limit is knowledge.DefaultLimit.
func (s *Service) Search(ctx context.Context, c Caller, q knowledge.Query) (knowledge.Result, error) {
	if q.Limit == 0 {
		q.Limit = knowledge.DefaultLimit
	}
	if q.Limit < 1 || q.Limit > knowledge.MaxLimit {
		return knowledge.Result{}, a2a.BadParam("limit", "must be an integer from 1 to %d", knowledge.MaxLimit)
	}
	return s.runQuery(ctx, c, &q, "")
}

// runQuery is the one search path behind every surface: it trims and
// checks the query and its filters (naming fields with prefix, "data." for
// a message's data part), spends the caller's search budget and asks the
// index. q.Limit must already be in range.
func (s *Service) runQuery(ctx context.Context, c Caller, q *knowledge.Query, prefix string) (knowledge.Result, error) {
	q.Text = strings.TrimSpace(q.Text)
	if q.Text == "" {
		return knowledge.Result{}, a2a.BadParam(prefix+"query", "must not be empty")
	}
	if n := len([]rune(q.Text)); n > knowledge.MaxQueryLen {
		return knowledge.Result{}, a2a.BadParam(prefix+"query", "%d characters, at most %d", n, knowledge.MaxQueryLen)
	}
	f := discussions.Filters{Kind: q.Kind, Product: q.Product, Environment: q.Environment}
	if err := f.Validate(); err != nil {
		return knowledge.Result{}, toA2A(err, prefix)
	}
	if l := s.deps.SearchRate; l != nil {
		wait, ok := l.Allow(c.limitKey())
		if quota, on := l.Quota(QuotaSearch, c.limitKey()); on && c.Agent != nil {
			ratelimit.Note(ctx, quota)
		}
		if !ok {
			return knowledge.Result{}, &a2a.Error{
				Kind:       a2a.RateLimited,
				Message:    fmt.Sprintf("too many searches: the limit is %s per client", s.deps.SearchRate),
				RetryAfter: wait,
			}
		}
	}
	if s.deps.Search == nil {
		return knowledge.Result{}, a2a.Errorf(a2a.Unavailable, "the search index is not loaded yet; try again shortly")
	}
	if q.Now.IsZero() {
		q.Now = s.deps.Now()
	}
	res, err := s.deps.Search.Search(ctx, *q)
	if err != nil {
		return knowledge.Result{}, fmt.Errorf("search: %w", err)
	}
	return res, nil
}
