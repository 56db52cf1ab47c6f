package service

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
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
			*f.dst = v
		}
		if err := trustFilters(in.data, &q); err != nil {
			return a2a.SendMessageResponse{}, err
		}
	}
	res, err := s.runQuery(ctx, c, &q, "data.")
	if err != nil {
		return a2a.SendMessageResponse{}, err
	}
	msg, err := s.searchAnswer(m, q, res)
	if err != nil {
		return a2a.SendMessageResponse{}, err
	}
	s.noteEmptyBase(ctx, msg, res)
	return a2a.SendMessageResponse{Message: msg}, nil
}

// searchAnswer is the direct Message: a one-line summary and the hits.
func (s *Service) searchAnswer(m *a2a.Message, q knowledge.Query, res knowledge.Result) (*a2a.Message, error) {
	type result struct {
		Query       string                 `json:"query"`
		Results     []knowledge.Hit        `json:"results"`
		Corrections []knowledge.Correction `json:"corrections,omitempty"`
		// CorrectedQuery is the query answered when misspelt words were
		// read as close spellings.
		CorrectedQuery string `json:"correctedQuery,omitempty"`
	}
	hits := res.Hits
	if hits == nil {
		hits = []knowledge.Hit{}
	}
	data, err := json.Marshal(result{Query: q.Text, Results: hits, Corrections: res.Corrections, CorrectedQuery: res.CorrectedQuery})
	if err != nil {
		return nil, err
	}
	contextID := m.ContextID
	if contextID == "" {
		contextID = ulid.Make().String()
	}
	return &a2a.Message{
		MessageID: ulid.Make().String(),
		ContextID: contextID,
		Role:      a2a.RoleAgent,
		Parts:     []a2a.Part{a2a.TextPart(s.summary(q.Text, res)), a2a.DataPart(data)},
	}, nil
}

// trustFilters reads a data part's minScore, minTrust and minReputation
// into q: JSON numbers (minScore and minReputation integers).
func trustFilters(data map[string]json.RawMessage, q *knowledge.Query) error {
	var err error
	if q.MinScore, err = intField(data, "minScore"); err != nil {
		return err
	}
	if raw, ok := data["minReputation"]; ok && !bytes.Equal(raw, []byte("null")) {
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil {
			return a2a.BadParam("data.minReputation", "must be an integer")
		}
		q.MinReputation = &v
	}
	if raw, ok := data["minTrust"]; ok && !bytes.Equal(raw, []byte("null")) {
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return a2a.BadParam("data.minTrust", "must be a number")
		}
		q.MinTrust = &v
	}
	return nil
}
