package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/tasks"
)

// SetSchemaVersionForTest overwrites the schema version, to simulate a file
// written by a newer kfa.
func (s *DB) SetSchemaVersionForTest(v int) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaSchema, u64(uint64(v)))
	})
}

// PutTaskFormat1ForTest overwrites a task's record with its format-1
// (JSON) encoding, as a kfa before format 2 wrote it.
func (s *DB) PutTaskFormat1ForTest(t tasks.Task) error {
	v, err := json.Marshal(taskRecord{
		ID: t.ID, ContextID: t.ContextID, OwnerID: t.OwnerID, DiscussionID: t.DiscussionID,
		MessageID: t.MessageID, State: t.State, StatusTime: t.StatusTime.UnixMilli(),
		CreatedAt: t.CreatedAt.UnixMilli(), StatusMessage: t.StatusMessage, History: t.History,
		Artifacts: t.Artifacts,
	})
	if err != nil {
		return err
	}
	k, _ := idBytes(t.ID)
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketTasks).Put(k, v) })
}

// TaskFormatForTest returns the first byte (the format) of a task record.
func (s *DB) TaskFormatForTest(id string) (byte, error) {
	k, _ := idBytes(id)
	var f byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTasks).Get(k)
		if len(v) == 0 {
			return tasks.ErrNotFound
		}
		f = v[0]
		return nil
	})
	return f, err
}

// ContentDigestForTest is Digest without the meta bucket (whose secret
// differs from file to file).
func (s *DB) ContentDigestForTest() (string, error) {
	h := sha256.New()
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(bucketMeta) {
				return nil
			}
			fmt.Fprintf(h, "%q|", name)
			return b.ForEach(func(k, v []byte) error {
				fmt.Fprintf(h, "%x=%x|", k, v)
				return nil
			})
		})
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// WriteForTest runs fn as a request's write: in a group commit.
func (s *DB) WriteForTest(fn func(tx *bolt.Tx) error) error { return s.update(fn) }

// CommitCountsForTest reports the group committer's batches, transactions
// (reruns and solo calls included) and write-function runs so far.
func (s *DB) CommitCountsForTest() (batches, txs, runs uint64) {
	return s.commits.batches.Load(), s.commits.txs.Load(), s.commits.runs.Load()
}

// NotifyQueuedForTest makes every write send on ch once it is queued for
// group commit. Set it before any write is in flight.
func (s *DB) NotifyQueuedForTest(ch chan<- struct{}) { s.commits.queued = ch }

// HoldWriterForTest takes bbolt's writer and keeps it until release is
// called, so that writes queue up behind it.
func (s *DB) HoldWriterForTest() (release func()) {
	held, done := make(chan struct{}), make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		_ = s.db.Update(func(*bolt.Tx) error {
			close(held)
			<-done
			return nil
		})
	}()
	<-held
	return func() { close(done); <-finished }
}

// RefuseForTest marks err as a refusal, as the store's own writes do.
func RefuseForTest(err error) error { return refuse(err) }
