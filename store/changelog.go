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

	"github.com/kfa-project/kfa/changelog"
)

// The change log (changelog.Log). The log bucket maps a sequence number
// (8 bytes, big-endian) to a logRecord; the bucket's own sequence hands
// the numbers out, persisted with the transaction and never reused.
// bbolt has one writer at a time, so sequence order is commit order and
// every committed entry is final: a reader can move past it at once.
//
// A write that changes something appends its events with appendEvents
// in its own transaction; the commit wakes the followers (WakeLog). The
// records' change feed (get_changes) is the log's record events, which
// appendEvents also indexes (see bucketLogRecords).

// logRecord is one event as the log bucket holds it.
type logRecord struct {
	Kind    changelog.Kind `json:"k"`
	ID      string         `json:"i"`
	Owner   string         `json:"o,omitempty"`
	Ref     string         `json:"r,omitempty"`
	Note    string         `json:"n,omitempty"`
	At      int64          `json:"a"` // Unix ms
	Written int64          `json:"w"` // Unix ms: when the entry was written (trimming goes by it)
}

// appendEvents appends evs to the log in tx, written at now, and wakes
// the followers once tx commits. It must run in the transaction that
// makes the changes the events describe.
func (s *DB) appendEvents(tx *bolt.Tx, evs []changelog.Event, now time.Time) error {
	if len(evs) == 0 {
		return nil
	}
	for _, e := range evs {
		if err := putLogEntry(tx, logRecord{Kind: e.Kind, ID: e.ID, Owner: e.Owner, Ref: e.Ref, Note: e.Note,
			At: e.At.UnixMilli(), Written: now.UnixMilli()}); err != nil {
			return err
		}
	}
	tx.OnCommit(s.logWake.Notify)
	return nil
}

// putLogEntry appends r at the log's next sequence number and, for a
// record's event, indexes it in the records feed: the record's previous
// entry (and a deletion, at once) becomes one a reader starting over does
// not need.
func putLogEntry(tx *bolt.Tx, r logRecord) error {
	b := tx.Bucket(bucketLog)
	b.FillPercent = 1 // keys only ever grow
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	key := u64(seq)
	if err := b.Put(key, v); err != nil {
		return err
	}
	if !r.Kind.IsRecord() {
		return nil
	}
	recs, ids, drop := tx.Bucket(bucketLogRecords), tx.Bucket(bucketLogRecordIDs), tx.Bucket(bucketLogDroppable)
	recs.FillPercent, drop.FillPercent = 1, 1
	if err := recs.Put(key, nil); err != nil {
		return err
	}
	if prev := ids.Get([]byte(r.ID)); len(prev) == 8 && changelog.RecordDroppable(changelog.RecordUpserted, true) {
		if err := drop.Put(prev, nil); err != nil {
			return err
		}
	}
	if changelog.RecordDroppable(r.Kind, false) {
		if err := drop.Put(key, nil); err != nil {
			return err
		}
	}
	return ids.Put([]byte(r.ID), key)
}

// ReadLog implements changelog.Log: one seek and limit steps.
func (s *DB) ReadLog(ctx context.Context, after changelog.Position, limit int) ([]changelog.Event, error) {
	t, err := s.ReadTail(ctx, after, limit)
	return t.Events, err
}

// ReadTail implements changelog.Log. Every committed entry is readable
// at once, so a read is never held back.
func (s *DB) ReadTail(_ context.Context, after changelog.Position, limit int) (changelog.Tail, error) {
	var t changelog.Tail
	err := s.db.View(func(tx *bolt.Tx) error {
		t.Trimmed = metaPosition(tx, metaLogTrimmed)
		if after.Seq > 0 {
			if v := tx.Bucket(bucketLog).Get(u64(after.Seq)); v != nil {
				e, err := decodeLogEntry(u64(after.Seq), v)
				if err != nil {
					return err
				}
				t.At = e
			}
		}
		c := tx.Bucket(bucketLog).Cursor()
		for k, v := c.Seek(u64(after.Seq + 1)); k != nil && len(t.Events) < limit; k, v = c.Next() {
			e, err := decodeLogEntry(k, v)
			if err != nil {
				return err
			}
			t.Events = append(t.Events, e)
		}
		return nil
	})
	return t, err
}

// metaPosition reads a position kept in the meta bucket; zero when absent.
func metaPosition(tx *bolt.Tx, key []byte) changelog.Position {
	if v := tx.Bucket(bucketMeta).Get(key); len(v) == 8 {
		return changelog.Position{Seq: binary.BigEndian.Uint64(v)}
	}
	return changelog.Position{}
}

func decodeLogRecord(k, v []byte) (uint64, logRecord, error) {
	if len(k) != 8 {
		return 0, logRecord{}, fmt.Errorf("store: log key %x is not a sequence number", k)
	}
	seq := binary.BigEndian.Uint64(k)
	var r logRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return seq, r, fmt.Errorf("store: decode log entry %d: %w", seq, err)
	}
	return seq, r, nil
}

func decodeLogEntry(k, v []byte) (changelog.Event, error) {
	seq, r, err := decodeLogRecord(k, v)
	if err != nil {
		return changelog.Event{}, err
	}
	return changelog.Event{
		Pos: changelog.Position{Seq: seq}, Kind: r.Kind, ID: r.ID, Owner: r.Owner, Ref: r.Ref, Note: r.Note,
		At: time.UnixMilli(r.At).UTC(),
	}, nil
}

// logEpoch names the file's log: derived from its random secret, so it
// names the file without revealing the secret.
func (s *DB) logEpoch() string {
	sum := sha256.Sum256(append([]byte("kfa log epoch\x00"), s.secret...))
	return hex.EncodeToString(sum[:8])
}

// LogState implements changelog.Log.
func (s *DB) LogState(_ context.Context) (changelog.State, error) {
	st := changelog.State{Epoch: s.logEpoch()}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLog)
		st.Last = changelog.Position{Seq: b.Sequence()}
		if k, _ := b.Cursor().First(); len(k) == 8 {
			st.First = changelog.Position{Seq: binary.BigEndian.Uint64(k)}
		}
		st.Trimmed = metaPosition(tx, metaLogTrimmed)
		return nil
	})
	return st, err
}

// WakeLog implements changelog.Log: woken by every commit that appended
// events (bbolt has one process).
func (s *DB) WakeLog() (<-chan struct{}, func()) { return s.logWake.Subscribe() }

var (
	_ changelog.Log       = (*DB)(nil)
	_ changelog.Cursors   = (*DB)(nil)
	_ changelog.Trimmable = (*DB)(nil)
)

// cursorRecord is a durable follower's cursor as the log_cursors bucket
// holds it.
type cursorRecord struct {
	Seq     uint64 `json:"s"`
	Updated int64  `json:"u"` // Unix ms
}

// SaveCursor implements changelog.Cursors.
func (s *DB) SaveCursor(_ context.Context, name string, pos changelog.Position, at time.Time) error {
	v, err := json.Marshal(cursorRecord{Seq: pos.Seq, Updated: at.UnixMilli()})
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketLogCursors).Put([]byte(name), v) })
}

// ListCursors implements changelog.Cursors.
func (s *DB) ListCursors(_ context.Context) ([]changelog.Cursor, error) {
	var out []changelog.Cursor
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLogCursors).ForEach(func(k, v []byte) error {
			var c cursorRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("store: decode the cursor %q: %w", k, err)
			}
			out = append(out, changelog.Cursor{Name: string(k), Pos: changelog.Position{Seq: c.Seq}, Updated: time.UnixMilli(c.Updated).UTC()})
			return nil
		})
	})
	return out, err
}
