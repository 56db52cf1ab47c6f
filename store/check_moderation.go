package store

import (
	"encoding/hex"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/moderation"
)

// Moderation: each item is about content that exists, hidden exactly
// when the item says so, and in the queue exactly when it waits for
// review; each flag is on an item, and the open ones add up to its
// count; the queue lists only items.
func (c *checker) checkModeration() error {
	err := c.walk(bucketModItems, func(tx *bolt.Tx, k, v []byte) {
		var it moderation.Item
		if err := json.Unmarshal(v, &it); err != nil || len(k) != 16 || it.ID != idString(k) {
			c.rep.addf(VDecode, bucketModItems, k, hex.EncodeToString(k), "", "not an item stored under its id (%v)", err)
			return
		}
		d, r, err := itemContent(tx, &it)
		if err != nil || d == nil || (it.OnReply() && r == nil) {
			c.rep.addf(VModeration, bucketModItems, k, it.ID, "", "item on %s %s, which does not exist", it.Kind, it.ID)
			return
		}
		hidden := d.Hidden
		if r != nil {
			hidden = r.Hidden
		}
		if hidden != it.IsHidden() {
			c.rep.addf(VModeration, bucketModItems, k, it.ID, "", "item says hidden %q, the content's hidden is %v", it.Hidden, hidden)
		}
		if queued := tx.Bucket(bucketModQueue).Get(k) != nil; queued != it.Queued {
			c.rep.addf(VModeration, bucketModQueue, k, it.ID, "", "in the queue: %v; the item waits for review: %v", queued, it.Queued)
		}
		open := 0
		prefixed(tx.Bucket(bucketModFlags), k, func(_, fv []byte) {
			var f moderation.Flag
			if json.Unmarshal(fv, &f) == nil && f.Round == it.Round {
				open++
			}
		})
		if open != it.Flags {
			c.rep.addf(VModeration, bucketModItems, k, it.ID, "", "item counts %d open flags, %d are stored", it.Flags, open)
		}
	})
	if err != nil {
		return err
	}
	err = c.walk(bucketModFlags, func(tx *bolt.Tx, k, v []byte) {
		var f moderation.Flag
		if err := json.Unmarshal(v, &f); err != nil || len(k) != 32 || f.ItemID != idString(k[:16]) || f.AgentID != idString(k[16:]) {
			c.rep.addf(VDecode, bucketModFlags, k, hex.EncodeToString(k), "", "not a flag stored under its item and agent (%v)", err)
			return
		}
		if tx.Bucket(bucketModItems).Get(k[:16]) == nil {
			c.rep.addf(VModeration, bucketModFlags, k, f.ItemID+"|"+f.AgentID, "", "flag on item %s, which does not exist", f.ItemID)
		}
	})
	if err != nil {
		return err
	}
	return c.walk(bucketModQueue, func(tx *bolt.Tx, k, _ []byte) {
		if tx.Bucket(bucketModItems).Get(k) == nil {
			c.rep.addf(VModeration, bucketModQueue, k, hex.EncodeToString(k), "", "queue entry without an item")
		}
	})
}
