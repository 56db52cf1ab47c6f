package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// trimBatch is how many log entries one trimming transaction removes, so
// that a large trim never holds the writer for long.
const trimBatch = 5000

// TrimLog implements changelog.Trimmable in two walks, each in write
// transactions of at most trimBatch removals:
//
//   - The log from where the last trim stopped (metaLogTrimFloor): every
//     entry that is not a record's, written before the horizon and
//     behind every live cursor, goes. The walk stops at the first entry
//     too new or not yet passed, and the floor moves there, so the
//     records' entries that stay are not walked again.
//   - The records' droppable entries (bucketLogDroppable: those with a
//     later entry for their record, and deletions), oldest first, under
//     the same bounds; never the newest record event.
//
// The newest entry of the log always stays. Cursors not updated since
// before are deleted.
func (s *DB) TrimLog(ctx context.Context, before time.Time) (int, error) {
	if s.readOnly {
		return 0, errReadOnly
	}
	horizon := before.UnixMilli()
	bound, stale, err := s.trimBound(horizon)
	if err != nil {
		return 0, fmt.Errorf("store: trim the log: %w", err)
	}
	removed := 0
	for _, step := range []func(*bolt.Tx, uint64, int64) (int, bool, error){trimEvents, trimRecordEvents} {
		for {
			if err := ctx.Err(); err != nil {
				return removed, err
			}
			// A read transaction first: a trim with nothing to do writes
			// nothing (a bbolt commit writes the file even when nothing
			// changed).
			var work bool
			if err := s.db.View(func(tx *bolt.Tx) error {
				var err error
				work, err = trimWork(tx, step, bound, horizon)
				return err
			}); err != nil {
				return removed, fmt.Errorf("store: trim the log: %w", err)
			}
			if !work {
				break
			}
			var n int
			var more bool
			err := s.db.Update(func(tx *bolt.Tx) error {
				var err error
				n, more, err = step(tx, bound, horizon)
				return err
			})
			if err != nil {
				return removed, fmt.Errorf("store: trim the log: %w", err)
			}
			removed += n
			if !more {
				break
			}
		}
	}
	if len(stale) > 0 {
		err := s.db.Update(func(tx *bolt.Tx) error {
			for _, name := range stale {
				if err := tx.Bucket(bucketLogCursors).Delete([]byte(name)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return removed, fmt.Errorf("store: delete stale cursors: %w", err)
		}
	}
	return removed, nil
}

// trimBound is the newest sequence trimming may remove: before every
// cursor updated at or after horizon, and before the newest entry. stale
// are the cursors not updated since.
func (s *DB) trimBound(horizon int64) (bound uint64, stale []string, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if last := tx.Bucket(bucketLog).Sequence(); last > 0 {
			bound = last - 1
		}
		return tx.Bucket(bucketLogCursors).ForEach(func(k, v []byte) error {
			var c cursorRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("decode the cursor %q: %w", k, err)
			}
			if c.Updated < horizon {
				stale = append(stale, string(k))
				return nil
			}
			bound = min(bound, c.Seq)
			return nil
		})
	})
	return bound, stale, err
}

// trimEvents removes up to trimBatch of the log's entries that are not
// a record's, from the floor on, and reports whether it stopped at the
// batch's end.
func trimEvents(tx *bolt.Tx, bound uint64, horizon int64) (int, bool, error) {
	meta := tx.Bucket(bucketMeta)
	floor := uint64(0)
	if v := meta.Get(metaLogTrimFloor); len(v) == 8 {
		floor = binary.BigEndian.Uint64(v)
	}
	b := tx.Bucket(bucketLog)
	var drop [][]byte
	walked, more := floor, false
	c := b.Cursor()
	for k, v := c.Seek(u64(floor + 1)); k != nil; k, v = c.Next() {
		seq, r, err := decodeLogRecord(k, v)
		if err != nil {
			return 0, false, err
		}
		if seq > bound || r.Written >= horizon {
			break
		}
		if len(drop) == trimBatch {
			more = true
			break
		}
		walked = seq
		if !r.Kind.IsRecord() {
			drop = append(drop, k)
		}
	}
	for _, k := range drop {
		if err := b.Delete(k); err != nil {
			return 0, false, err
		}
	}
	if walked == floor {
		return 0, false, nil
	}
	if len(drop) > 0 {
		if err := raiseMeta(meta, metaLogTrimmed, binary.BigEndian.Uint64(drop[len(drop)-1])); err != nil {
			return 0, false, err
		}
	}
	return len(drop), more, meta.Put(metaLogTrimFloor, u64(walked))
}

// trimRecordEvents removes up to trimBatch of the records' droppable
// entries, oldest first, and reports whether it stopped at the batch's
// end.
func trimRecordEvents(tx *bolt.Tx, bound uint64, horizon int64) (int, bool, error) {
	recs := tx.Bucket(bucketLogRecords)
	newest := uint64(0)
	if k, _ := recs.Cursor().Last(); len(k) == 8 {
		newest = binary.BigEndian.Uint64(k)
	}
	b, ids, drops := tx.Bucket(bucketLog), tx.Bucket(bucketLogRecordIDs), tx.Bucket(bucketLogDroppable)
	type entry struct {
		key []byte
		id  string
	}
	var drop []entry
	more := false
	c := drops.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) != 8 {
			return 0, false, fmt.Errorf("log_droppable key %x is not a sequence number", k)
		}
		seq := binary.BigEndian.Uint64(k)
		if seq > bound || seq >= newest {
			break
		}
		v := b.Get(k)
		if v == nil {
			drop = append(drop, entry{key: k}) // gone already: only its mark is left
			continue
		}
		_, r, err := decodeLogRecord(k, v)
		if err != nil {
			return 0, false, err
		}
		if r.Written >= horizon {
			break
		}
		if len(drop) == trimBatch {
			more = true
			break
		}
		drop = append(drop, entry{key: k, id: r.ID})
	}
	removed := 0
	for _, e := range drop {
		if e.id != "" {
			removed++
			if err := b.Delete(e.key); err != nil {
				return 0, false, err
			}
			if err := recs.Delete(e.key); err != nil {
				return 0, false, err
			}
			if latest := ids.Get([]byte(e.id)); len(latest) == 8 && string(latest) == string(e.key) {
				// A deletion that was its record's latest entry: the record
				// is gone, and so is every trace of it in the feed.
				if err := ids.Delete([]byte(e.id)); err != nil {
					return 0, false, err
				}
			}
		}
		if err := drops.Delete(e.key); err != nil {
			return 0, false, err
		}
	}
	if removed > 0 {
		top := binary.BigEndian.Uint64(drop[len(drop)-1].key)
		meta := tx.Bucket(bucketMeta)
		if err := raiseMeta(meta, metaLogTrimmed, top); err != nil {
			return 0, false, err
		}
		if err := raiseMeta(meta, metaLogRecordsTrimmed, top); err != nil {
			return 0, false, err
		}
	}
	return removed, more, nil
}

// raiseMeta sets the sequence kept at key to seq unless it holds a later
// one.
func raiseMeta(meta *bolt.Bucket, key []byte, seq uint64) error {
	if v := meta.Get(key); len(v) == 8 && binary.BigEndian.Uint64(v) >= seq {
		return nil
	}
	return meta.Put(key, u64(seq))
}

// trimWork reports whether step would change anything in tx (a read
// transaction): it runs the step against a view that refuses writes, and
// a refused write means there is work.
func trimWork(tx *bolt.Tx, step func(*bolt.Tx, uint64, int64) (int, bool, error), bound uint64, horizon int64) (bool, error) {
	_, _, err := step(tx, bound, horizon)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, bolterrors.ErrTxNotWritable):
		return true, nil
	}
	return false, err
}
