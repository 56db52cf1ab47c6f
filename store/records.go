package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/commands"
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

// The schema's Records: records, by the id's bytes, and their count.
func init() {
	mapped[commands.Records] = &docKind[knowledge.Record]{
		kind: commands.Records, bucket: bucketRecords, parts: []part{pRest},
		decode: jsonDoc[knowledge.Record]("record"), encode: encodeDoc[knowledge.Record],
		write: func(r *run, old, rec *knowledge.Record, v []byte) error {
			b := r.tx.Bucket(bucketRecords)
			// Imports often come sorted by id, and bbolt's default (pages
			// split half full) would then leave the file twice the size of
			// its data.
			b.FillPercent = recordsFill
			if err := b.Put([]byte(rec.ID), v); err != nil {
				return err
			}
			if old == nil {
				r.acc[string(keyRecordCount)]++
			}
			return nil
		},
		remove: func(r *run, old *knowledge.Record) error {
			r.acc[string(keyRecordCount)]--
			return r.tx.Bucket(bucketRecords).Delete([]byte(old.ID))
		},
	}
}
