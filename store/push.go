package store

import (
	"bytes"
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

// Push configs, and the deliveries a transition leaves. A task's configs
// are keyed under the task; the decision of a transition returns one
// delivery per config, which the transition's transaction writes
// (putDeliveries), so the outbox holds exactly the transitions that
// committed.

// pushConfigKey is task id (16) | config id.
func pushConfigKey(task []byte, id string) []byte { return cat(task, []byte(id)) }

// putPushConfigRecord writes config c, encoded as v, under its task.
func putPushConfigRecord(tx *bolt.Tx, c *push.Config, v []byte) error {
	tk, ok := idBytes(c.TaskID)
	if !ok {
		return errBadID("task", c.TaskID)
	}
	return tx.Bucket(bucketPushConfigs).Put(pushConfigKey(tk, c.ID), v)
}

// loadPushTask loads what a config command of ownerID decides on about
// its task: its header as a push.TaskRef, and its key; nil for another
// owner's task as for an unknown one (ownedTask), so that nothing else of
// the task (its configs, its deliveries) is read for a stranger.
func loadPushTask(tx *bolt.Tx, ownerID, taskID string) (*push.TaskRef, []byte, error) {
	k, v, err := ownedTask(tx, ownerID, taskID)
	if v == nil || err != nil {
		return nil, nil, err
	}
	h, err := headerOf(v)
	if err != nil {
		return nil, nil, err
	}
	return &push.TaskRef{ID: h.ID, OwnerID: h.OwnerID, State: h.State}, k, nil
}

// PutPushConfig implements push.ConfigStore: load the owner, the task and
// its config ids, push.DecidePut, persist.
func (s *DB) PutPushConfig(_ context.Context, c push.Config, max int) (push.Config, bool, error) {
	v, err := storedoc.EncodePushConfig(&c)
	if err != nil {
		return push.Config{}, false, err
	}
	var created bool
	err = s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		var st push.PutState
		var tk []byte
		var err error
		if c.OwnerID != "" {
			if st.Owner, err = loadAgent(tx, c.OwnerID); err != nil {
				return nil, err
			}
		}
		if st.Task, tk, err = loadPushTask(tx, c.OwnerID, c.TaskID); err != nil {
			return nil, err
		}
		if tk != nil {
			cur := tx.Bucket(bucketPushConfigs).Cursor()
			for k, _ := cur.Seek(tk); k != nil && bytes.HasPrefix(k, tk); k, _ = cur.Next() {
				st.ConfigIDs = append(st.ConfigIDs, string(k[len(tk):]))
			}
		}
		if created, err = push.DecidePut(st, c, max); err != nil {
			return nil, err
		}
		return func(tx *bolt.Tx) error { return putPushConfigRecord(tx, &c, v) }, nil
	})
	if err != nil {
		return push.Config{}, false, err
	}
	return c, created, nil
}

// pushConfigsOf returns the configs stored under task key tk.
func pushConfigsOf(tx *bolt.Tx, tk []byte) ([]push.Config, error) {
	var out []push.Config
	cur := tx.Bucket(bucketPushConfigs).Cursor()
	for k, v := cur.Seek(tk); k != nil && bytes.HasPrefix(k, tk); k, v = cur.Next() {
		c, err := storedoc.DecodePushConfig(v)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// PushConfigs implements push.ConfigStore.
func (s *DB) PushConfigs(_ context.Context, ownerID, taskID string) ([]push.Config, error) {
	var out []push.Config
	err := s.db.View(func(tx *bolt.Tx) error {
		t, tk, err := loadPushTask(tx, ownerID, taskID)
		if err != nil {
			return err
		}
		if t == nil {
			return push.ErrTaskNotFound
		}
		out, err = pushConfigsOf(tx, tk)
		return err
	})
	return out, err
}

// PushConfig implements push.OutboxStore.
func (s *DB) PushConfig(_ context.Context, taskID, id string) (push.Config, error) {
	tk, ok := idBytes(taskID)
	if !ok {
		return push.Config{}, push.ErrNotFound
	}
	var c push.Config
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPushConfigs).Get(pushConfigKey(tk, id))
		if v == nil {
			return push.ErrNotFound
		}
		var err error
		c, err = storedoc.DecodePushConfig(v)
		return err
	})
	return c, err
}

// DeletePushConfig implements push.ConfigStore: load the owner, the task, whether
// it holds the config and the task's pending deliveries,
// push.DecideDelete, persist. Deleting a config the task does not have
// decides on a read and writes nothing.
func (s *DB) DeletePushConfig(_ context.Context, ownerID, taskID, id string, at time.Time) (bool, error) {
	var out push.DeleteOutcome
	err := s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		var st push.DeleteState
		var tk []byte
		var err error
		if ownerID != "" {
			if st.Owner, err = loadAgent(tx, ownerID); err != nil {
				return nil, err
			}
		}
		if st.Task, tk, err = loadPushTask(tx, ownerID, taskID); err != nil {
			return nil, err
		}
		if tk != nil {
			st.Exists = tx.Bucket(bucketPushConfigs).Get(pushConfigKey(tk, id)) != nil
			if st.Pending, err = pendingOf(tx, tk); err != nil {
				return nil, err
			}
		}
		if out, err = push.DecideDelete(st, ownerID, id, at); err != nil || !out.Deleted {
			return nil, err
		}
		before := make(map[string]push.Delivery, len(st.Pending))
		for _, d := range st.Pending {
			before[d.ID] = d
		}
		return func(tx *bolt.Tx) error {
			if err := tx.Bucket(bucketPushConfigs).Delete(pushConfigKey(tk, id)); err != nil {
				return err
			}
			for i := range out.Failed {
				old := before[out.Failed[i].ID]
				if err := putDelivery(tx, &old, &out.Failed[i]); err != nil {
					return err
				}
			}
			return nil
		}, nil
	})
	return out.Deleted, err
}

// pendingOf returns the task's pending deliveries.
func pendingOf(tx *bolt.Tx, tk []byte) ([]push.Delivery, error) {
	var pending []push.Delivery
	cur := tx.Bucket(bucketPushByTask).Cursor()
	for k, _ := cur.Seek(tk); k != nil && bytes.HasPrefix(k, tk); k, _ = cur.Next() {
		d, err := getDelivery(tx, k[len(tk):])
		if err != nil {
			return nil, err
		}
		if d.State == push.Pending {
			pending = append(pending, d)
		}
	}
	return pending, nil
}

// putDeliveries writes the new deliveries a transition's decision left.
func putDeliveries(tx *bolt.Tx, ds []push.Delivery) error {
	for i := range ds {
		if err := putDelivery(tx, nil, &ds[i]); err != nil {
			return err
		}
	}
	return nil
}

// deliveryDue is the log event of d becoming due at at (the operator's
// retry appends it).
func deliveryDue(d *push.Delivery, at time.Time) changelog.Event { return push.DueEvent(d, at) }
