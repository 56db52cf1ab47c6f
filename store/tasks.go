package store

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/tasks"
)

func errBadID(what, id string) error { return fmt.Errorf("store: %s id %q is not a ULID", what, id) }

func getTask(tx *bolt.Tx, id string) (tasks.Task, error) {
	k, ok := idBytes(id)
	if !ok {
		return tasks.Task{}, tasks.ErrNotFound
	}
	v := tx.Bucket(bucketTasks).Get(k)
	if v == nil {
		return tasks.Task{}, tasks.ErrNotFound
	}
	return decodeTask(v)
}

func putTask(tx *bolt.Tx, t *tasks.Task) error {
	v, err := encodeTask(t)
	if err != nil {
		return err
	}
	return putTaskRecord(tx, t, v)
}

// putTaskRecord writes t's encoded record v.
func putTaskRecord(tx *bolt.Tx, t *tasks.Task, v []byte) error {
	k, ok := idBytes(t.ID)
	if !ok {
		return errBadID("task", t.ID)
	}
	return tx.Bucket(bucketTasks).Put(k, v)
}

func msgIDKey(owner []byte, messageID string) []byte { return cat(owner, []byte(messageID)) }

// GetTask implements tasks.Store: the owner is read from the record's
// header, and only the owner's task is decoded.
func (s *DB) GetTask(_ context.Context, ownerID, id string) (tasks.Task, error) {
	k, ok := idBytes(id)
	if !ok {
		return tasks.Task{}, tasks.ErrNotFound
	}
	var t tasks.Task
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTasks).Get(k)
		if err := owned(v, ownerID); err != nil {
			return err
		}
		var err error
		t, err = decodeTask(v)
		return err
	})
	return t, err
}

// ownedTask returns the key and record of task id if ownerID owns it
// (any owner when ownerID is ""), and a nil record for another owner's
// task as for an unknown one: the first step of every load by task id,
// which reads only the record's header.
func ownedTask(tx *bolt.Tx, ownerID, id string) ([]byte, []byte, error) {
	k, ok := idBytes(id)
	if !ok {
		return nil, nil, nil
	}
	v := tx.Bucket(bucketTasks).Get(k)
	switch err := owned(v, ownerID); {
	case errors.Is(err, tasks.ErrNotFound):
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	}
	return k, v, nil
}

// owned returns nil when the task record v exists and ownerID owns it
// (any owner when ownerID is ""), and tasks.ErrNotFound otherwise, reading
// the owner from the record's header without decoding the rest.
func owned(v []byte, ownerID string) error {
	if v == nil {
		return tasks.ErrNotFound
	}
	if ownerID == "" {
		return nil
	}
	if v[0] == taskFormatJSON { // format 1, rewritten by migration 2
		t, err := decodeTaskJSON(v)
		if err == nil && t.OwnerID != ownerID {
			err = tasks.ErrNotFound
		}
		return err
	}
	r, err := parseTask(v)
	if err == nil && string(r.owner) != ownerID {
		err = tasks.ErrNotFound
	}
	return err
}

// ViewSnapshot implements tasks.Store: fn sees the task's stored wire
// JSON in place, inside the read transaction.
func (s *DB) ViewSnapshot(_ context.Context, ownerID, id string, fn func(*tasks.Snapshot) error) error {
	k, ok := idBytes(id)
	if !ok {
		return tasks.ErrNotFound
	}
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTasks).Get(k)
		if err := owned(v, ownerID); err != nil {
			return err
		}
		snap, err := snapshotOf(v)
		if err != nil {
			return err
		}
		return fn(&snap)
	})
}

// TaskByMessageID implements tasks.Store.
func (s *DB) TaskByMessageID(_ context.Context, ownerID, messageID string) (tasks.Task, error) {
	owner, ok := idBytes(ownerID)
	if !ok {
		return tasks.Task{}, tasks.ErrNotFound
	}
	var t tasks.Task
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketTaskMsgIDs).Get(msgIDKey(owner, messageID))
		if id == nil {
			return tasks.ErrNotFound
		}
		var err error
		t, err = getTask(tx, idString(id))
		return err
	})
	return t, err
}
