package store

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/commands"
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

// The schema's PushConfigs, in push_configs: task id (16) | config id.
func init() {
	mapped[commands.PushConfigs] = &docKind[push.Config]{
		kind: commands.PushConfigs, bucket: bucketPushConfigs, parts: []part{pULID, pRest},
		decode: func(_, v []byte) (push.Config, error) { return storedoc.DecodePushConfig(v) },
		encode: storedoc.EncodePushConfig,
	}
}
