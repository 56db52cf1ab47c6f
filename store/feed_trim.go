package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/knowledge"
)

// trimBatch is how many feed entries one trimming transaction removes, so
// that a large trim never holds the writer for long.
const trimBatch = 5000

// TrimFeed implements knowledge.Store. One read transaction walks the feed
// from its newest entry back, remembering the records it has seen; an
// entry written before `before` is removable when a later entry for its
// record exists (that one says more) or when it is a delete (the record
// is gone: a reader starting over never saw it). The newest entry of the
// feed always stays, so the feed never empties and a follower can still
// check its position. Then write transactions of trimBatch entries remove
// them, each moving the feed's trimmed sequence (metaFeedTrimmed) on with
// the removal. Decisions stay true while writes go on: a later write only
// adds entries after them.
//
// The walk holds the set of record ids in the feed in memory: about 100
// bytes a record.
func (s *DB) TrimFeed(ctx context.Context, before time.Time) (int, error) {
	if s.readOnly {
		return 0, errReadOnly
	}
	horizon := before.UnixMilli()
	var drop []uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketFeed).Cursor()
		// Entries are written in sequence order: when the oldest was
		// written within the horizon, so was every other, and there is
		// nothing to walk (the common case, hour after hour). An entry
		// from before write times were kept says nothing of the others.
		if _, v := c.First(); v != nil {
			var f feedRecord
			if err := json.Unmarshal(v, &f); err == nil && f.Written != 0 && f.Written >= horizon {
				return nil
			}
		}
		seen := map[string]struct{}{}
		k, v := c.Last()
		last := true
		for n := 0; k != nil; n++ {
			if n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if len(k) != 8 {
				return fmt.Errorf("store: feed key %x is not a sequence number", k)
			}
			var f feedRecord
			if err := json.Unmarshal(v, &f); err != nil {
				return fmt.Errorf("store: decode feed entry %d: %w", binary.BigEndian.Uint64(k), err)
			}
			_, later := seen[f.ID]
			if !last && f.written() < horizon && (later || f.Op == knowledge.OpDelete) {
				drop = append(drop, binary.BigEndian.Uint64(k))
			}
			if !later {
				seen[f.ID] = struct{}{}
			}
			last = false
			k, v = c.Prev()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: trim feed: %w", err)
	}
	// drop is newest first; remove the oldest first, so that the trimmed
	// sequence only ever moves forward.
	removed := 0
	for end := len(drop); end > 0; end -= trimBatch {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		batch := drop[max(0, end-trimBatch):end]
		err := s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketFeed)
			for _, seq := range batch {
				if err := b.Delete(u64(seq)); err != nil {
					return err
				}
			}
			meta := tx.Bucket(bucketMeta)
			if v := meta.Get(metaFeedTrimmed); len(v) == 8 && binary.BigEndian.Uint64(v) >= batch[0] {
				return nil
			}
			return meta.Put(metaFeedTrimmed, u64(batch[0]))
		})
		if err != nil {
			return removed, fmt.Errorf("store: trim feed: %w", err)
		}
		removed += len(batch)
	}
	return removed, nil
}
