package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	bolt "go.etcd.io/bbolt"
)

// Digest returns a SHA-256 over every bucket, key and value in the file, in
// key order, but the log's cursors (the followers' bookkeeping, which a
// running follower writes whenever it saves its position). Tests use it
// to prove that a refused request left the store exactly as it was, and
// that reads write nothing.
func (s *DB) Digest() (string, error) {
	h := sha256.New()
	var n [8]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(bucketLogCursors) {
				return nil
			}
			put(name)
			return b.ForEach(func(k, v []byte) error {
				put(k)
				put(v)
				return nil
			})
		})
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
