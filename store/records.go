package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// The records bucket maps a record id (its bytes) to the record's JSON.
// The number of records is the "records" counter, kept in the same
// transactions, so a count is one read.

var keyRecordCount = []byte("records")

var _ knowledge.Store = (*DB)(nil)

// recordsFill is how full the records bucket's pages are filled before
// they split.
const recordsFill = 0.9

func getRecord(tx *bolt.Tx, id string) (*knowledge.Record, error) {
	v := tx.Bucket(bucketRecords).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var r knowledge.Record
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("store: decode record %s: %w", id, err)
	}
	return &r, nil
}

// UpsertRecords implements knowledge.Store. It runs as one transaction of
// its own rather than a group commit: an import batch is large, and a
// group commit may run its function twice.
func (s *DB) UpsertRecords(_ context.Context, recs []knowledge.Record, now time.Time) ([]knowledge.Outcome, error) {
	if s.readOnly {
		return nil, errReadOnly
	}
	out := make([]knowledge.Outcome, len(recs))
	err := s.db.Update(func(tx *bolt.Tx) error {
		var evs []changelog.Event
		b := tx.Bucket(bucketRecords)
		// Imports often come sorted by id, and bbolt's default (pages split
		// half full) would then leave the file twice the size of its data.
		b.FillPercent = recordsFill
		for i, in := range recs {
			old, err := getRecord(tx, in.ID)
			if err != nil {
				return err
			}
			rec, o := knowledge.Merge(old, in, now)
			out[i] = o
			if o == knowledge.Unchanged {
				continue
			}
			v, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(rec.ID), v); err != nil {
				return err
			}
			if o == knowledge.Added {
				if err := counter(tx.Bucket(bucketCounts), keyRecordCount, 1); err != nil {
					return err
				}
			}
			evs = append(evs, changelog.Event{Kind: changelog.RecordUpserted, ID: rec.ID, At: rec.UpdatedAt})
		}
		return s.appendEvents(tx, evs, now)
	})
	if err != nil {
		return nil, fmt.Errorf("store: upsert records: %w", err)
	}
	return out, nil
}

// DeleteRecord implements knowledge.Store.
func (s *DB) DeleteRecord(_ context.Context, id string, at time.Time) error {
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b.Get([]byte(id)) == nil {
			return refuse(knowledge.ErrNotFound)
		}
		if err := b.Delete([]byte(id)); err != nil {
			return err
		}
		if err := counter(tx.Bucket(bucketCounts), keyRecordCount, -1); err != nil {
			return err
		}
		return s.appendEvents(tx, []changelog.Event{{Kind: changelog.RecordDeleted, ID: id, At: at}}, at)
	})
}

// GetRecord implements knowledge.Store.
func (s *DB) GetRecord(_ context.Context, id string) (knowledge.Record, error) {
	var out knowledge.Record
	err := s.db.View(func(tx *bolt.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if r == nil {
			return knowledge.ErrNotFound
		}
		out = *r
		return nil
	})
	return out, err
}

// ListRecords implements knowledge.Store: one seek and limit steps.
func (s *DB) ListRecords(_ context.Context, after string, limit int) (knowledge.RecordPage, error) {
	page := knowledge.RecordPage{Records: make([]knowledge.Record, 0, min(limit, 256))}
	err := s.db.View(func(tx *bolt.Tx) error {
		page.Total = readCounter(tx.Bucket(bucketCounts), keyRecordCount)
		c := tx.Bucket(bucketRecords).Cursor()
		var k, v []byte
		if after == "" {
			k, v = c.First()
		} else if k, v = c.Seek([]byte(after)); k != nil && bytes.Equal(k, []byte(after)) {
			k, v = c.Next()
		}
		for ; k != nil; k, v = c.Next() {
			if len(page.Records) == limit {
				page.Next = page.Records[len(page.Records)-1].ID
				return nil
			}
			var r knowledge.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("store: decode record %s: %w", k, err)
			}
			page.Records = append(page.Records, r)
		}
		return nil
	})
	return page, err
}

// DeleteRecords implements knowledge.Store. Like UpsertRecords it runs as
// one transaction of its own: a batch of deletes is large.
func (s *DB) DeleteRecords(_ context.Context, ids []string, at time.Time) (deleted, missing []string, err error) {
	if s.readOnly {
		return nil, nil, errReadOnly
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		deleted, missing = deleted[:0], missing[:0]
		b := tx.Bucket(bucketRecords)
		for _, id := range ids {
			if b.Get([]byte(id)) == nil {
				missing = append(missing, id)
				continue
			}
			if err := b.Delete([]byte(id)); err != nil {
				return err
			}
			deleted = append(deleted, id)
		}
		if len(deleted) == 0 {
			return nil
		}
		evs := make([]changelog.Event, len(deleted))
		for i, id := range deleted {
			evs[i] = changelog.Event{Kind: changelog.RecordDeleted, ID: id, At: at}
		}
		if err := s.appendEvents(tx, evs, at); err != nil {
			return err
		}
		return counter(tx.Bucket(bucketCounts), keyRecordCount, -int64(len(deleted)))
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: delete records: %w", err)
	}
	return deleted, missing, nil
}
