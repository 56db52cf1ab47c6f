package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Migration 13: nothing an ask writes serves the operator alone.
//
// Until schema 13 every ask wrote, besides what agents read and what the
// limits need, two task indexes across owners (idx_task_all,
// idx_task_allst) and their counters, which only the operator's listings
// and kfa stats read, and an entry in idx_author_posts, which only the
// operator's hide of everything an agent wrote reads; every reply wrote
// one there too, and every transition moved the two indexes and their
// counters. The operator's listings now merge the owners' ranges
// (list_all.go), the totals are the owners' counters summed, and the
// hide scans the discussions and replies (posts.go).
//
// The migration drops the three buckets and the counters of the two
// indexes, in one transaction. Dropping a bucket frees its pages without
// reading its entries (bbolt walks the page tree), so the transaction
// holds no chunk of entries in memory whatever the file's size; on a file
// of a million tasks it frees some 40,000 pages (160 MiB), which bbolt's
// freelist lists, and writes with every commit, until the file's growth
// has reused them, as after migration 6.
func dropOperatorIndexes(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketTaskAll, bucketTaskAllSt, bucketAuthorPosts} {
		if tx.Bucket(name) == nil {
			continue
		}
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("delete bucket %s: %w", name, err)
		}
	}
	counts := tx.Bucket(bucketCounts)
	for _, family := range [][]byte{counterKey(bucketTaskAll, nil), counterKey(bucketTaskAllSt, nil)} {
		// One counter, and one per state: a few keys.
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
