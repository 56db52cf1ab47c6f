package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/push"
)

// indexDueByDestination creates idx_push_dest and indexes every pending
// delivery in it, from idx_push_due, which holds exactly the pending ones.
// The outbox is a queue, so the pending deliveries fit one transaction.
// An entry that points at no pending delivery is left for kfa check to
// report, not a reason to refuse the file.
func indexDueByDestination(tx *bolt.Tx) error {
	dest, err := tx.CreateBucketIfNotExists(bucketPushDest)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketPushDest, err)
	}
	return tx.Bucket(bucketPushDue).ForEach(func(k, _ []byte) error {
		if len(k) != 24 {
			return fmt.Errorf("malformed %s key %x", bucketPushDue, k)
		}
		d, err := getDelivery(tx, k[8:])
		if errors.Is(err, push.ErrDeliveryNotFound) || err == nil && !due(&d) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("delivery %s: %w", idString(k[8:]), err)
		}
		return dest.Put(destKey(d.Destination, d.NextAt, k[8:]), nil)
	})
}
