package service

import (
	"context"

	"github.com/kfa-project/kfa/knowledge"
)

// What the surfaces read of the records besides searching them: the web
// view's record page, and MCP's fetch and get_changes.

// Record returns one record.
func (s *Service) Record(ctx context.Context, id string) (knowledge.Record, error) {
	return s.deps.Records.Get(ctx, id)
}

// ListRecords lists records in id order after the id after, pageSize of
// them (the default when nil).
func (s *Service) ListRecords(ctx context.Context, after string, pageSize *int) (knowledge.RecordPage, error) {
	return s.deps.Records.List(ctx, after, pageSize)
}

// RecordChanges lists the record changes after a position of the feed,
// at most limit of them.
func (s *Service) RecordChanges(ctx context.Context, after knowledge.Position, limit int) (knowledge.ChangesPage, error) {
	return s.deps.Records.Changes(ctx, after, limit)
}
