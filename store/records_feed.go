package store

import (
	"context"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// The records' change feed is the log's record events, read through
// their index (bucketLogRecords): a page is one seek and limit steps
// whatever else the log holds.

// Changes implements knowledge.Store: each change with its record as of
// Changes implements knowledge.Store, in one read transaction.
func (s *DB) Changes(_ context.Context, after changelog.Position, limit int) (knowledge.FeedState, []knowledge.Change, error) {
	var (
		st  knowledge.FeedState
		out []knowledge.Change
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		st = s.feedState(tx)
		log := tx.Bucket(bucketLog)
		c := tx.Bucket(bucketLogRecords).Cursor()
		for k, _ := c.Seek(u64(after.Seq + 1)); k != nil && len(out) < limit; k, _ = c.Next() {
			e, err := decodeLogEntry(k, log.Get(k))
			if err != nil {
				return err
			}
			ch := knowledge.Change{Pos: e.Pos, ID: e.ID, Op: knowledge.ChangeOp(e.Kind), At: e.At}
			if ch.Op.Carries() {
				if ch.Record, err = getRecord(tx, e.ID); err != nil {
					return err
				}
			}
			out = append(out, ch)
		}
		return nil
	})
	return st, out, err
}

// Feed implements knowledge.Store.
func (s *DB) Feed(_ context.Context) (knowledge.FeedState, error) {
	var st knowledge.FeedState
	err := s.db.View(func(tx *bolt.Tx) error {
		st = s.feedState(tx)
		return nil
	})
	return st, err
}

// feedState reads where the records' feed stands in tx.
func (s *DB) feedState(tx *bolt.Tx) knowledge.FeedState {
	st := knowledge.FeedState{Epoch: s.logEpoch()}
	c := tx.Bucket(bucketLogRecords).Cursor()
	if k, _ := c.First(); len(k) == 8 {
		st.First = changelog.Position{Seq: binary.BigEndian.Uint64(k)}
	}
	if k, _ := c.Last(); len(k) == 8 {
		st.Last = changelog.Position{Seq: binary.BigEndian.Uint64(k)}
	}
	st.Trimmed = metaPosition(tx, metaLogRecordsTrimmed)
	return st
}

// GetRecords implements knowledge.Store: one read transaction.
func (s *DB) GetRecords(_ context.Context, ids []string) ([]*knowledge.Record, error) {
	out := make([]*knowledge.Record, len(ids))
	err := s.db.View(func(tx *bolt.Tx) error {
		for i, id := range ids {
			r, err := getRecord(tx, id)
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	return out, err
}
