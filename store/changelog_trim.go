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

	"github.com/kfa-project/kfa/changelog"
)

// trimBatch is how many log entries one trimming transaction removes, so
// that a large trim never holds the writer for long.
const trimBatch = 5000

// TrimLog implements changelog.Trimmable in two walks, each in write
// transactions of at most trimBatch removals, as the change log's policy
// decides (changelog.TrimBound, TrimStep, KeepRecordEvent):
//
//   - The log from where the last trim stopped (metaLogTrimFloor); the
//     walk stops where the policy says, and the floor moves there, so the
//     records' entries that stay are not walked again.
//   - The records' droppable entries (bucketLogDroppable, marked as they
//     are appended: changelog.RecordDroppable), oldest first.
//
// Stale cursors are deleted.
func (s *DB) TrimLog(ctx context.Context, before time.Time) (int, error) {
	if s.readOnly {
		return 0, errReadOnly
	}
	before = before.Truncate(time.Millisecond) // the log keeps milliseconds
	bound, stale, err := s.trimBound(before)
	if err != nil {
		return 0, fmt.Errorf("store: trim the log: %w", err)
	}
	removed := 0
	for _, step := range []func(*bolt.Tx, changelog.Bound, time.Time) (int, bool, error){trimEvents, trimRecordEvents} {
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
				work, err = trimWork(tx, step, bound, before)
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
				n, more, err = step(tx, bound, before)
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

// trimBound reads the cursors and the newest sequence, and asks the
// policy how far the trim may reach and which cursors are stale.
func (s *DB) trimBound(horizon time.Time) (bound changelog.Bound, stale []string, err error) {
	var cursors []changelog.Cursor
	var newest changelog.Position
	err = s.db.View(func(tx *bolt.Tx) error {
		newest = changelog.Position{Seq: tx.Bucket(bucketLog).Sequence()}
		return tx.Bucket(bucketLogCursors).ForEach(func(k, v []byte) error {
			var c cursorRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("decode the cursor %q: %w", k, err)
			}
			cursors = append(cursors, changelog.Cursor{Name: string(k), Pos: changelog.Position{Seq: c.Seq},
				Updated: time.UnixMilli(c.Updated).UTC()})
			return nil
		})
	})
	bound, stale = changelog.TrimBound(cursors, newest, horizon)
	return bound, stale, err
}

// trimEvents walks up to trimBatch of the log's entries from the floor,
// removes those the policy drops, and reports whether it stopped at the
// batch's end.
func trimEvents(tx *bolt.Tx, bound changelog.Bound, horizon time.Time) (int, bool, error) {
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
		stop, dropped := changelog.TrimStep(changelog.Event{Pos: changelog.Position{Seq: seq}, Kind: r.Kind},
			time.UnixMilli(r.Written), bound, horizon)
		if stop {
			break
		}
		if len(drop) == trimBatch {
			more = true
			break
		}
		walked = seq
		if dropped {
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
// entries, oldest first, where the policy lets them go, and reports
// whether it stopped at the batch's end.
func trimRecordEvents(tx *bolt.Tx, bound changelog.Bound, horizon time.Time) (int, bool, error) {
	recs := tx.Bucket(bucketLogRecords)
	var newest changelog.Position
	if k, _ := recs.Cursor().Last(); len(k) == 8 {
		newest = changelog.Position{Seq: binary.BigEndian.Uint64(k)}
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
		pos := changelog.Position{Seq: binary.BigEndian.Uint64(k)}
		v := b.Get(k)
		if v == nil {
			if !bound.Allows(pos) || !pos.Before(newest) {
				break
			}
			drop = append(drop, entry{key: k}) // gone already: only its mark is left
			continue
		}
		_, r, err := decodeLogRecord(k, v)
		if err != nil {
			return 0, false, err
		}
		if changelog.KeepRecordEvent(changelog.Event{Pos: pos, Kind: r.Kind}, time.UnixMilli(r.Written), newest, bound, horizon) {
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
func trimWork(tx *bolt.Tx, step func(*bolt.Tx, changelog.Bound, time.Time) (int, bool, error), bound changelog.Bound, horizon time.Time) (bool, error) {
	_, _, err := step(tx, bound, horizon)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, bolterrors.ErrTxNotWritable):
		return true, nil
	}
	return false, err
}
