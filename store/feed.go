package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/knowledge"
)

// The feed bucket maps a sequence number (8 bytes, big-endian, so key
// order is sequence order) to a feedRecord. The bucket's own sequence
// counter hands out the numbers: it is persisted with the transaction and
// never reused, even after the newest entries are gone.
type feedRecord struct {
	ID string       `json:"id"`
	Op knowledge.Op `json:"op"`
	At int64        `json:"at"` // Unix milliseconds: the record's updatedAt, or the delete's time
	// Written is when the entry was written, in Unix milliseconds (what
	// retention goes by: an import may give a record an old updatedAt).
	// Entries written before it was kept have 0, and go by At.
	Written int64 `json:"w,omitempty"`
}

// written is when f was written, as well as it is known.
func (f feedRecord) written() int64 {
	if f.Written != 0 {
		return f.Written
	}
	return f.At
}

// appendChange writes the next feed entry, written at now; it must run in
// the transaction that writes the record.
func appendChange(tx *bolt.Tx, id string, op knowledge.Op, at, now time.Time) error {
	b := tx.Bucket(bucketFeed)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	v, err := json.Marshal(feedRecord{ID: id, Op: op, At: at.UnixMilli(), Written: now.UnixMilli()})
	if err != nil {
		return err
	}
	return b.Put(u64(seq), v)
}

// Changes implements knowledge.Store: one seek and limit steps, each
// entry with its record as of this read.
func (s *DB) Changes(ctx context.Context, after uint64, limit int) ([]knowledge.Change, error) {
	return s.ChangesWithin(ctx, after, limit, 0)
}

// ChangesWithin is Changes bounded by bytes too: it stops before the
// entry whose record would take the records' Size past maxBytes, but
// returns at least one entry. maxBytes 0 means no bound. The search
// index reads the feed with it, so a backlog of large records costs no
// more memory than one of small ones.
func (s *DB) ChangesWithin(_ context.Context, after uint64, limit, maxBytes int) ([]knowledge.Change, error) {
	var out []knowledge.Change
	size := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketFeed).Cursor()
		for k, v := c.Seek(u64(after + 1)); k != nil && len(out) < limit; k, v = c.Next() {
			if len(k) != 8 {
				return fmt.Errorf("store: feed key %x is not a sequence number", k)
			}
			var f feedRecord
			if err := json.Unmarshal(v, &f); err != nil {
				return fmt.Errorf("store: decode feed entry %d: %w", binary.BigEndian.Uint64(k), err)
			}
			ch := knowledge.Change{Seq: binary.BigEndian.Uint64(k), ID: f.ID, Op: f.Op, At: time.UnixMilli(f.At).UTC()}
			if f.Op == knowledge.OpUpsert {
				r, err := getRecord(tx, f.ID)
				if err != nil {
					return err
				}
				ch.Record = r
				if r != nil {
					if size += r.Size(); maxBytes > 0 && size > maxBytes && len(out) > 0 {
						return nil
					}
				}
			}
			out = append(out, ch)
		}
		return nil
	})
	return out, err
}

// Feed implements knowledge.Store. The epoch is derived from the file's
// random secret (made when the file is created), so it names the file
// without revealing the secret.
func (s *DB) Feed(_ context.Context) (knowledge.FeedState, error) {
	sum := sha256.Sum256(append([]byte("kfa feed epoch\x00"), s.secret...))
	st := knowledge.FeedState{Epoch: hex.EncodeToString(sum[:8])}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFeed)
		st.Last = b.Sequence()
		if k, _ := b.Cursor().First(); len(k) == 8 {
			st.First = binary.BigEndian.Uint64(k)
		}
		if v := tx.Bucket(bucketMeta).Get(metaFeedTrimmed); len(v) == 8 {
			st.Trimmed = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return st, err
}
