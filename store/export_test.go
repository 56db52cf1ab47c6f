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
