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
// in its own transaction; the commit wakes the followers (WakeLog).

// logRecord is one event as the log bucket holds it.
type logRecord struct {
	Kind    changelog.Kind `json:"k"`
	ID      string         `json:"i"`
	Owner   string         `json:"o,omitempty"`
	Ref     string         `json:"r,omitempty"`
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
	b := tx.Bucket(bucketLog)
	b.FillPercent = 1 // keys only ever grow
	for _, e := range evs {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		v, err := json.Marshal(logRecord{Kind: e.Kind, ID: e.ID, Owner: e.Owner, Ref: e.Ref,
			At: e.At.UnixMilli(), Written: now.UnixMilli()})
		if err != nil {
			return err
		}
		if err := b.Put(u64(seq), v); err != nil {
			return err
		}
	}
	tx.OnCommit(s.logWake.Notify)
	return nil
}

// ReadLog implements changelog.Log: one seek and limit steps.
func (s *DB) ReadLog(_ context.Context, after changelog.Position, limit int) ([]changelog.Event, error) {
	var out []changelog.Event
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLog).Cursor()
		for k, v := c.Seek(u64(after.Seq + 1)); k != nil && len(out) < limit; k, v = c.Next() {
			e, err := decodeLogEntry(k, v)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

func decodeLogEntry(k, v []byte) (changelog.Event, error) {
	if len(k) != 8 {
		return changelog.Event{}, fmt.Errorf("store: log key %x is not a sequence number", k)
	}
	var r logRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return changelog.Event{}, fmt.Errorf("store: decode log entry %d: %w", binary.BigEndian.Uint64(k), err)
	}
	return changelog.Event{
		Pos: changelog.Position{Seq: binary.BigEndian.Uint64(k)}, Kind: r.Kind, ID: r.ID, Owner: r.Owner, Ref: r.Ref,
		At: time.UnixMilli(r.At).UTC(),
	}, nil
}

// LogState implements changelog.Log. The epoch is derived from the
// file's random secret, so it names the file without revealing it.
func (s *DB) LogState(_ context.Context) (changelog.State, error) {
	sum := sha256.Sum256(append([]byte("kfa log epoch\x00"), s.secret...))
	st := changelog.State{Epoch: hex.EncodeToString(sum[:8])}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLog)
		st.Last = changelog.Position{Seq: b.Sequence()}
		if k, _ := b.Cursor().First(); len(k) == 8 {
			st.First = changelog.Position{Seq: binary.BigEndian.Uint64(k)}
		}
		if v := tx.Bucket(bucketMeta).Get(metaLogTrimmed); len(v) == 8 {
			st.Trimmed = changelog.Position{Seq: binary.BigEndian.Uint64(v)}
		}
		return nil
	})
	return st, err
}

// WakeLog implements changelog.Log: woken by every commit that appended
// events (bbolt has one process).
func (s *DB) WakeLog() (<-chan struct{}, func()) { return s.logWake.Subscribe() }

var _ changelog.Log = (*DB)(nil)
