package store

import bolt "go.etcd.io/bbolt"

// SetSchemaVersionForTest overwrites the schema version, to simulate a file
// written by a newer kfa.
func (s *DB) SetSchemaVersionForTest(v int) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaSchema, u64(uint64(v)))
	})
}
