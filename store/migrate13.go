package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Migration 13: no index an ask writes serves what another already does,
// or the operator alone.
//
// Until schema 13 every ask wrote, besides what agents read and what the
// limits need, two task indexes across owners (idx_task_all,
// idx_task_allst) and their counters, which only the operator's listings
// and kfa stats read; an owner's tasks by time (idx_task_owner) and its
// counter, the same tasks idx_task_state holds by state; and an entry in
// idx_author_posts, which only the operator's hide of everything an agent
// wrote reads. Every reply wrote one there too, and every transition
// moved the three task indexes and their counters. The listings now merge
// ranges of idx_task_state (list_all.go), the totals are its counters
// summed, and the hide scans the discussions and replies (posts.go).
//
// The migration drops the four buckets and the counters of the three
// indexes, in one transaction. Dropping a bucket frees its pages without
// reading its entries (bbolt walks the page tree), so the transaction
// holds no chunk of entries in memory, only the counters' keys (one per
// owner); on a file of a million tasks it frees tens of thousands of
// pages, which bbolt's freelist lists, and writes with every commit,
// until the file's growth has reused them, as after migration 6.
func dropOperatorIndexes(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketTaskAll, bucketTaskAllSt, bucketTaskByOwner, bucketAuthorPosts} {
		if tx.Bucket(name) == nil {
			continue
		}
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("delete bucket %s: %w", name, err)
		}
	}
	counts := tx.Bucket(bucketCounts)
	for _, family := range [][]byte{counterKey(bucketTaskAll, nil), counterKey(bucketTaskAllSt, nil), counterKey(bucketTaskByOwner, nil)} {
		// One counter, one per state, one per owner.
		var keys [][]byte
		c := counts.Cursor()
		for k, _ := c.Seek(family); k != nil && bytes.HasPrefix(k, family); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := counts.Delete(k); err != nil {
				return err
			}
		}
	}
	return nil
}
