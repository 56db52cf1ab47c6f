package store

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/knowledge"
)

// migrateFeedToLog is schema 9: the records' change feed becomes the
// change log's record events. The log is written anew: first the feed's
// entries in feed order (each record's history as the feed kept it, with
// when each entry was written), then the log's other events in log order;
// the record events the log held already (appended beside the feed since
// schema 7) are the feed's last entries, so they are not copied twice.
// Positions start again from 1: nothing followed the log before this
// schema, and a get_changes cursor of the old feed is answered as too old
// (the reader starts over; see knowledge.ParseCursor). The feed bucket
// and its trimmed mark go.
func migrateFeedToLog(tx *bolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bucketLogCursors); err != nil {
		return err
	}
	feed := tx.Bucket(bucketFeed)
	if feed == nil {
		// Nothing to carry over (a test that lowered the schema number of
		// a current file): the log stays as it is.
		for _, name := range [][]byte{bucketLogRecords, bucketLogRecordIDs, bucketLogDroppable} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	}
	for _, name := range [][]byte{bucketLogRecords, bucketLogRecordIDs, bucketLogDroppable} {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	var others []logRecord
	if err := tx.Bucket(bucketLog).ForEach(func(k, v []byte) error {
		_, r, err := decodeLogRecord(k, v)
		if err != nil {
			return err
		}
		if !r.Kind.IsRecord() {
			others = append(others, r)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := tx.DeleteBucket(bucketLog); err != nil {
		return err
	}
	if _, err := tx.CreateBucket(bucketLog); err != nil {
		return err
	}
	if err := feed.ForEach(func(k, v []byte) error {
		var f feedRecord
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("decode feed entry %x: %w", k, err)
		}
		return putLogEntry(tx, logRecord{Kind: knowledge.EventKind(f.Op), ID: f.ID, At: f.At, Written: f.written()})
	}); err != nil {
		return err
	}
	if err := tx.DeleteBucket(bucketFeed); err != nil {
		return err
	}
	for _, r := range others {
		if err := putLogEntry(tx, r); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	for _, k := range [][]byte{metaFeedTrimmed, metaLogTrimmed} {
		if err := meta.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// feedRecord is an entry of the records' change feed bucket of schemas 1
// to 7, which migrateFeedToLog reads.
type feedRecord struct {
	ID string       `json:"id"`
	Op knowledge.Op `json:"op"`
	At int64        `json:"at"` // Unix milliseconds: the record's updatedAt, or the delete's time
	// Written is when the entry was written (Unix ms); 0 in entries
	// written before it was kept, which go by At.
	Written int64 `json:"w,omitempty"`
}

// written is when f was written, as well as it is known.
func (f feedRecord) written() int64 {
	if f.Written != 0 {
		return f.Written
	}
	return f.At
}
