package service

import (
	"context"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/peers"
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

// Followed returns a document followed from a peer, by its key, when
// readers may see it (peers.ErrNoDocument for none, a hidden one or a
// placeholder).
func (s *Service) Followed(ctx context.Context, key string) (peers.Document, error) {
	if s.deps.Peers == nil || !peers.IsDocumentKey(key) {
		return peers.Document{}, peers.ErrNoDocument
	}
	d, err := s.deps.Peers.Document(ctx, key)
	if err != nil {
		return peers.Document{}, err
	}
	if !d.Visible() || (d.Record == nil && d.Thread == nil) {
		return peers.Document{}, peers.ErrNoDocument
	}
	return d, nil
}

// RecordChanges lists the record changes after a position of the feed,
// at most limit of them.
func (s *Service) RecordChanges(ctx context.Context, after knowledge.Position, limit int) (knowledge.ChangesPage, error) {
	return s.deps.Records.Changes(ctx, after, limit)
}
