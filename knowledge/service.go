package knowledge

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/input"
)

// Page sizes of List.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// Service applies the record rules over a Store: validation, upsert by id,
// batched imports. It is safe for concurrent use.
type Service struct {
	store Store
	now   func() time.Time
}

// NewService returns a Service over store. now stamps records imported
// without updatedAt, and deletes.
func NewService(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

// Get returns one record.
func (s *Service) Get(ctx context.Context, id string) (Record, error) {
	if err := ValidateID(id); err != nil {
		return Record{}, err
	}
	r, err := s.store.GetRecord(ctx, id)
	if err != nil {
		return Record{}, fmt.Errorf("get record %s: %w", id, err)
	}
	return r, nil
}

// List returns records in id order after the id after, pageSize of them
// (DefaultPageSize when nil).
func (s *Service) List(ctx context.Context, after string, asked *int) (RecordPage, error) {
	pageSize, err := input.PageSize(asked, DefaultPageSize, MaxPageSize)
	if err != nil {
		return RecordPage{}, err
	}
	if after != "" {
		if err := ValidateID(after); err != nil {
			return RecordPage{}, input.Errorf("after", "not a record id")
		}
	}
	p, err := s.store.ListRecords(ctx, after, pageSize)
	if err != nil {
		return RecordPage{}, fmt.Errorf("list records: %w", err)
	}
	return p, nil
}

// Delete removes a record; the delete goes on the change log, so the
// search index drops it too.
func (s *Service) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	if err := s.store.DeleteRecord(ctx, id, s.now().UTC().Truncate(time.Millisecond)); err != nil {
		return fmt.Errorf("delete record %s: %w", id, err)
	}
	return nil
}

// Upsert validates and writes recs in one transaction. Records without
// UpdatedAt are stamped with the current time when they change.
func (s *Service) Upsert(ctx context.Context, recs []Record) ([]Outcome, error) {
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return nil, fmt.Errorf("record %d (%q): %w", i, recs[i].ID, err)
		}
	}
	out, err := s.store.UpsertRecords(ctx, recs, s.now())
	if err != nil {
		return nil, fmt.Errorf("upsert %d records: %w", len(recs), err)
	}
	return out, nil
}
