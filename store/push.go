package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
	"github.com/kfa-project/kfa/tasks"
)

// Push configs and the outbox. A task's configs are keyed under the task;
// a transition writes one delivery per config (enqueuePush) in its own
// transaction, so the outbox holds exactly the transitions that
// committed. The transition code calls enqueuePush and nothing else of
// this file.

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

// pushTask reads the header of the task a config call names, if ownerID
// owns it (any owner when ownerID is ""). What it refuses is a refusal.
func pushTask(tx *bolt.Tx, ownerID, taskID string) (tasks.Task, []byte, error) {
	k, ok := idBytes(taskID)
	if !ok {
		return tasks.Task{}, nil, refuse(push.ErrTaskNotFound)
	}
	v := tx.Bucket(bucketTasks).Get(k)
	if v == nil {
		return tasks.Task{}, nil, refuse(push.ErrTaskNotFound)
	}
	h, err := headerOf(v)
	if err != nil {
		return tasks.Task{}, nil, refuse(err)
	}
	if ownerID != "" && h.OwnerID != ownerID {
		return tasks.Task{}, nil, refuse(push.ErrTaskNotFound)
	}
	return h, k, nil
}

// checkPutPushConfig is the reading part of PutPushConfig: the task, its
// state, the bound. It writes nothing; what it refuses is a refusal.
func checkPutPushConfig(tx *bolt.Tx, c *push.Config, max int) (created bool, err error) {
	h, tk, err := pushTask(tx, c.OwnerID, c.TaskID)
	if err != nil {
		return false, err
	}
	if h.State.Terminal() {
		return false, refuse(push.ErrTaskTerminal)
	}
	n := 0
	cur := tx.Bucket(bucketPushConfigs).Cursor()
	for k, _ := cur.Seek(tk); k != nil && bytes.HasPrefix(k, tk); k, _ = cur.Next() {
		if string(k[len(tk):]) == c.ID {
			return false, nil // a replacement
		}
		n++
	}
	if max > 0 && n >= max {
		return false, refuse(push.ErrTooManyConfigs)
	}
	return true, nil
}

// PutPushConfig implements push.ConfigStore. Its checks run first in a
// read transaction, so a refused config never queues a write.
func (s *DB) PutPushConfig(_ context.Context, c push.Config, max int) (push.Config, bool, error) {
	if err := s.db.View(func(tx *bolt.Tx) error { _, err := checkPutPushConfig(tx, &c, max); return err }); err != nil {
		return push.Config{}, false, unrefuse(err)
	}
	v, err := storedoc.EncodePushConfig(&c)
	if err != nil {
		return push.Config{}, false, err
	}
	var created bool
	err = s.update(func(tx *bolt.Tx) error {
		var err error
		if created, err = checkPutPushConfig(tx, &c, max); err != nil {
			return err
		}
		return putPushConfigRecord(tx, &c, v)
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
		_, tk, err := pushTask(tx, ownerID, taskID)
		if err != nil {
			return err
		}
		out, err = pushConfigsOf(tx, tk)
		return err
	})
	return out, unrefuse(err)
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

// DeletePushConfig implements push.ConfigStore. Deleting a config the
// task does not have decides on a read and writes nothing.
func (s *DB) DeletePushConfig(_ context.Context, ownerID, taskID, id string, at time.Time) (bool, error) {
	var exists bool
	err := s.db.View(func(tx *bolt.Tx) error {
		_, tk, err := pushTask(tx, ownerID, taskID)
		if err == nil {
			exists = tx.Bucket(bucketPushConfigs).Get(pushConfigKey(tk, id)) != nil
		}
		return err
	})
	if err != nil || !exists {
		return false, unrefuse(err)
	}
	var deleted bool
	err = s.update(func(tx *bolt.Tx) error {
		_, tk, err := pushTask(tx, ownerID, taskID)
		if err != nil {
			return err
		}
		key := pushConfigKey(tk, id)
		if deleted = tx.Bucket(bucketPushConfigs).Get(key) != nil; !deleted {
			return nil
		}
		if err := tx.Bucket(bucketPushConfigs).Delete(key); err != nil {
			return err
		}
		return failPendingOf(tx, tk, id, at)
	})
	return deleted, err
}

// failPendingOf fails the pending deliveries of the task's config id: a
// deleted config gets nothing more.
func failPendingOf(tx *bolt.Tx, tk []byte, configID string, at time.Time) error {
	var pending []push.Delivery
	cur := tx.Bucket(bucketPushByTask).Cursor()
	for k, _ := cur.Seek(tk); k != nil && bytes.HasPrefix(k, tk); k, _ = cur.Next() {
		d, err := getDelivery(tx, k[len(tk):])
		if err != nil {
			return err
		}
		if d.ConfigID == configID && d.State == push.Pending {
			pending = append(pending, d)
		}
	}
	for _, d := range pending {
		old := d
		d.State, d.FinishedAt, d.NextAt = push.Failed, at, time.Time{}
		d.Reason = "the config was deleted before the delivery succeeded"
		if err := putDelivery(tx, &old, &d); err != nil {
			return err
		}
	}
	return nil
}

// deliveryID is the id of the delivery of t's transition to config
// configID: a ULID of the transition's time whose entropy is a hash of
// the three, so that a rerun of a group-commit transaction writes the
// same delivery, and a receiver sees the same jti on every attempt.
func deliveryID(t *tasks.Task, configID string) string {
	sum := sha256.Sum256([]byte(t.ID + "|" + configID + "|" + string(t.State)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(t.StatusTime))
	_ = id.SetEntropy(sum[:10])
	return id.String()
}

// pushEvent is the body a transition of t sends: a StreamResponse holding
// its status update.
func pushEvent(t *tasks.Task) ([]byte, error) {
	return json.Marshal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskID: t.ID, ContextID: t.ContextID,
		Status: a2a.TaskStatus{State: t.State, Message: t.StatusMessage, Timestamp: a2a.FormatTime(t.StatusTime)},
	}})
}

// enqueuePush writes, in the transaction of t's transition, one pending
// delivery for each config of t, due at once, and returns their log
// events (DeliveryDue) for the caller to append. A task without configs
// costs one seek.
func enqueuePush(tx *bolt.Tx, t *tasks.Task) ([]changelog.Event, error) {
	tk, ok := idBytes(t.ID)
	if !ok {
		return nil, errBadID("task", t.ID)
	}
	cur := tx.Bucket(bucketPushConfigs).Cursor()
	k, v := cur.Seek(tk)
	if k == nil || !bytes.HasPrefix(k, tk) {
		return nil, nil
	}
	event, err := pushEvent(t)
	if err != nil {
		return nil, err
	}
	var ds []push.Delivery
	for ; k != nil && bytes.HasPrefix(k, tk); k, v = cur.Next() {
		c, err := storedoc.DecodePushConfig(v)
		if err != nil {
			return nil, err
		}
		ds = append(ds, push.Delivery{
			ID: deliveryID(t, c.ID), TaskID: t.ID, ConfigID: c.ID, OwnerID: t.OwnerID,
			Destination: push.Destination(c.URL), State: push.Pending, Event: event,
			CreatedAt: t.StatusTime, NextAt: t.StatusTime,
		})
	}
	evs := make([]changelog.Event, len(ds))
	for i := range ds {
		if err := putDelivery(tx, nil, &ds[i]); err != nil {
			return nil, err
		}
		evs[i] = deliveryDue(&ds[i], t.StatusTime)
	}
	return evs, nil
}

// deliveryDue is the log event of d becoming due at at.
func deliveryDue(d *push.Delivery, at time.Time) changelog.Event {
	return changelog.Event{Kind: changelog.DeliveryDue, ID: d.ID, Owner: d.OwnerID, Ref: d.Destination, At: at}
}
