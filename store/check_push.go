package store

import (
	"encoding/binary"
	"encoding/hex"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

// VPush is a push config or delivery that disagrees with its task, its
// config or its indexes: a pending delivery that points at no task or no
// config (it could never be sent), an index entry that points at
// nothing, or a queue depth that is off.
const VPush = "push"

// checkPush: every config belongs to an existing task under its own key;
// every delivery is in its state and task indexes, and, while pending, in
// the due index at its next attempt, with its task and config in place;
// every index entry points at a delivery that agrees with it; the pending
// counter counts the pending deliveries.
func (c *checker) checkPush() error {
	err := c.walk(bucketPushConfigs, func(tx *bolt.Tx, k, v []byte) {
		if len(k) <= 16 {
			c.rep.addf(VDecode, bucketPushConfigs, k, hex.EncodeToString(k), "", "key is not task id | config id")
			return
		}
		taskID := idString(k[:16])
		cfg, err := storedoc.DecodePushConfig(v)
		if err != nil {
			c.rep.addf(VDecode, bucketPushConfigs, k, taskID, taskID, "%v", err)
			return
		}
		if cfg.TaskID != taskID || cfg.ID != string(k[16:]) {
			c.rep.addf(VPush, bucketPushConfigs, k, taskID, taskID, "config %q of task %s is stored under task %s, config %q",
				cfg.ID, cfg.TaskID, taskID, k[16:])
		}
		if tx.Bucket(bucketTasks).Get(k[:16]) == nil {
			c.rep.addf(VPush, bucketPushConfigs, k, taskID, taskID, "push config %q belongs to task %s, which does not exist", cfg.ID, taskID)
		}
	})
	if err != nil {
		return err
	}
	pending := 0
	err = c.walk(bucketPushOutbox, func(tx *bolt.Tx, k, v []byte) {
		id := hex.EncodeToString(k)
		if len(k) == 16 {
			id = idString(k)
		}
		d, err := storedoc.DecodeDelivery(v)
		if err != nil {
			c.rep.addf(VDecode, bucketPushOutbox, k, id, "", "%v", err)
			return
		}
		tk, ok := idBytes(d.TaskID)
		if len(k) != 16 || d.ID != id || !ok {
			c.rep.addf(VPush, bucketPushOutbox, k, id, d.TaskID, "delivery %q of task %q is stored under key %s", d.ID, d.TaskID, id)
			return
		}
		if tx.Bucket(bucketPushByState).Get(cat([]byte{deliveryStateByte(d.State)}, k)) == nil {
			c.rep.addf(VPush, bucketPushByState, k, id, d.TaskID, "delivery %s (%s) is missing from the state index", id, d.State)
		}
		if tx.Bucket(bucketPushByTask).Get(cat(tk, k)) == nil {
			c.rep.addf(VPush, bucketPushByTask, k, id, d.TaskID, "delivery %s is missing from its task's index", id)
		}
		if !due(&d) {
			return
		}
		pending++
		if tx.Bucket(bucketPushDue).Get(dueKey(d.NextAt, k)) == nil {
			c.rep.addf(VPush, bucketPushDue, k, id, d.TaskID, "pending delivery %s is missing from the due index", id)
		}
		if tx.Bucket(bucketPushDest).Get(destKey(d.Destination, d.NextAt, k)) == nil {
			c.rep.addf(VPush, bucketPushDest, k, id, d.TaskID, "pending delivery %s is missing from the due index by destination", id)
		}
		if tx.Bucket(bucketTasks).Get(tk) == nil {
			c.rep.addf(VPush, bucketPushOutbox, k, id, d.TaskID, "pending delivery %s points at task %s, which does not exist", id, d.TaskID)
		}
		if tx.Bucket(bucketPushConfigs).Get(pushConfigKey(tk, d.ConfigID)) == nil {
			c.rep.addf(VPush, bucketPushOutbox, k, id, d.TaskID, "pending delivery %s points at config %q of task %s, which does not exist",
				id, d.ConfigID, d.TaskID)
		}
	})
	if err != nil {
		return err
	}
	if err := c.checkPushIndexes(); err != nil {
		return err
	}
	return c.checkPushCounter(pending)
}

// checkPushIndexes: every entry of the four outbox indexes points at a
// delivery that agrees with it.
func (c *checker) checkPushIndexes() error {
	err := c.walk(bucketPushDest, func(tx *bolt.Tx, k, _ []byte) {
		dest, at, id, ok := splitDestKey(k)
		if !ok || len(id) != 16 {
			c.rep.addf(VDecode, bucketPushDest, k, hex.EncodeToString(k), "", "key is not destination | 0 | time | delivery id")
			return
		}
		d, err := getDelivery(tx, id)
		if err != nil || !due(&d) || ms(d.NextAt) != at || d.Destination != dest {
			c.rep.addf(VPush, bucketPushDest, k, idString(id), d.TaskID,
				"due entry of destination %q points at a delivery that is missing, not pending, due at another time or to another destination", dest)
		}
	})
	if err != nil {
		return err
	}
	err = c.walk(bucketPushDue, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 24 {
			c.rep.addf(VDecode, bucketPushDue, k, hex.EncodeToString(k), "", "key is not time | delivery id")
			return
		}
		d, err := getDelivery(tx, k[8:])
		if err != nil || !due(&d) || ms(d.NextAt) != binary.BigEndian.Uint64(k[:8]) {
			c.rep.addf(VPush, bucketPushDue, k, idString(k[8:]), d.TaskID,
				"due entry points at a delivery that is missing, not pending, or due at another time")
		} else if string(v) != d.Destination {
			c.rep.addf(VPush, bucketPushDue, k, idString(k[8:]), d.TaskID,
				"due entry names destination %q, the delivery %q", v, d.Destination)
		}
	})
	if err != nil {
		return err
	}
	err = c.walk(bucketPushByState, func(tx *bolt.Tx, k, _ []byte) {
		if len(k) != 17 {
			c.rep.addf(VDecode, bucketPushByState, k, hex.EncodeToString(k), "", "key is not state | delivery id")
			return
		}
		d, err := getDelivery(tx, k[1:])
		if err != nil || deliveryStateByte(d.State) != k[0] {
			c.rep.addf(VPush, bucketPushByState, k, idString(k[1:]), d.TaskID, "state entry %q points at a delivery that is missing or in another state", k[:1])
		}
	})
	if err != nil {
		return err
	}
	return c.walk(bucketPushByTask, func(tx *bolt.Tx, k, _ []byte) {
		if len(k) != 32 {
			c.rep.addf(VDecode, bucketPushByTask, k, hex.EncodeToString(k), "", "key is not task id | delivery id")
			return
		}
		d, err := getDelivery(tx, k[16:])
		if err != nil || d.TaskID != idString(k[:16]) {
			c.rep.addf(VPush, bucketPushByTask, k, idString(k[16:]), idString(k[:16]), "task entry points at a delivery that is missing or of another task")
		}
	})
}

// checkPushCounter compares the queue depth with the pending deliveries
// the walk counted, counting again in one transaction before reporting.
func (c *checker) checkPushCounter(walked int) error {
	return c.view(func(tx *bolt.Tx) error {
		got := readCounter(tx.Bucket(bucketCounts), pushPendingKey)
		if got == walked {
			return nil
		}
		n := 0
		prefixed(tx.Bucket(bucketPushByState), []byte{deliveryStateByte(push.Pending)}, func(_, _ []byte) { n++ })
		if got != n {
			c.rep.addf(VCounter, bucketCounts, pushPendingKey, string(pushPendingKey), "", "counter is %d, counted %d pending deliveries", got, n)
		}
		return nil
	})
}
