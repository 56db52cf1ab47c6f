package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
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
	k, ok := idBytes(t.ID)
	if !ok {
		return errBadID("task", t.ID)
	}
	v, err := encodeTask(t)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketTasks).Put(k, v)
}

// replaceTask writes t, which was old before a transition, moving its index
// entries when the state or status timestamp changed.
func replaceTask(tx *bolt.Tx, old, t *tasks.Task) error {
	if old.State != t.State || !old.StatusTime.Equal(t.StatusTime) {
		if err := indexTask(tx, old, -1); err != nil {
			return err
		}
		if err := indexTask(tx, t, +1); err != nil {
			return err
		}
	}
	return putTask(tx, t)
}

func msgIDKey(owner []byte, messageID string) []byte { return cat(owner, []byte(messageID)) }

// CreateAsk implements tasks.Store.
func (s *DB) CreateAsk(_ context.Context, c tasks.CreateAsk) (tasks.Task, bool, error) {
	owner, ok := idBytes(c.Task.OwnerID)
	if !ok {
		return tasks.Task{}, false, errBadID("owner", c.Task.OwnerID)
	}
	var (
		out     tasks.Task
		created bool
	)
	err := s.update(func(tx *bolt.Tx) error {
		out, created = tasks.Task{}, false
		// Idempotent retry: the first task for this message id, unchanged.
		if id := tx.Bucket(bucketTaskMsgIDs).Get(msgIDKey(owner, c.Task.MessageID)); id != nil {
			t, err := getTask(tx, idString(id))
			out = t
			return err
		}
		discID := c.Task.DiscussionID
		dk, ok := idBytes(discID)
		if c.JoinDiscussionID != "" {
			if !ok {
				return discussions.ErrNotFound
			}
			v := tx.Bucket(bucketDiscussions).Get(dk)
			if v == nil {
				return discussions.ErrNotFound
			}
			d, err := decodeDiscussion(v)
			if err != nil {
				return err
			}
			if d.Status != discussions.StatusOpen {
				return discussions.ErrAnswered
			}
		} else if !ok {
			return errBadID("discussion", discID)
		}
		counts := tx.Bucket(bucketCounts)
		if c.MaxOpen > 0 {
			open := readCounter(counts, counterKey(bucketTaskByState, cat(owner, []byte{stateByte(a2a.TaskStateWorking)})))
			if open >= c.MaxOpen {
				return tasks.ErrTooManyOpen
			}
		}
		// Checks are done; from here on only writes.
		if c.JoinDiscussionID == "" {
			if err := putDiscussion(tx, &c.Discussion, ""); err != nil {
				return err
			}
		}
		t := c.Task
		if err := putTask(tx, &t); err != nil {
			return err
		}
		if err := indexTask(tx, &t, +1); err != nil {
			return err
		}
		tid, _ := idBytes(t.ID)
		if err := tx.Bucket(bucketTaskMsgIDs).Put(msgIDKey(owner, t.MessageID), tid); err != nil {
			return err
		}
		if err := tx.Bucket(bucketTaskByDisc).Put(cat(dk, tid), owner); err != nil {
			return err
		}
		out, created = t, true
		return nil
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return out, created, nil
}

// GetTask implements tasks.Store.
func (s *DB) GetTask(_ context.Context, id string) (tasks.Task, error) {
	var t tasks.Task
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		t, err = getTask(tx, id)
		return err
	})
	return t, err
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

// CancelTask implements tasks.Store.
func (s *DB) CancelTask(_ context.Context, ownerID, id string, at time.Time) (tasks.Task, bool, error) {
	var (
		out     tasks.Task
		changed bool
	)
	err := s.update(func(tx *bolt.Tx) error {
		out, changed = tasks.Task{}, false
		t, err := getTask(tx, id)
		if err != nil {
			return err
		}
		if ownerID != "" && t.OwnerID != ownerID {
			return tasks.ErrNotFound
		}
		old := t
		ch, err := t.Cancel(at)
		if err != nil {
			return err
		}
		if ch {
			if err := replaceTask(tx, &old, &t); err != nil {
				return err
			}
			s.notifyOnCommit(tx, t)
		}
		out, changed = t, ch
		return nil
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return out, changed, nil
}

// ListTasks implements tasks.Store: one cursor seek, then at most
// PageSize+1 steps. totalSize comes from the index counters, except with
// Since (a key-only count of the matching range) or a context filter
// without an owner (operator listings, filtered while walking).
func (s *DB) ListTasks(_ context.Context, q tasks.ListQuery) (tasks.ListPage, error) {
	var owner []byte
	if q.OwnerID != "" {
		var ok bool
		if owner, ok = idBytes(q.OwnerID); !ok {
			return tasks.ListPage{Tasks: []tasks.Task{}}, nil
		}
	}
	if len(q.ContextID) > 255 {
		return tasks.ListPage{Tasks: []tasks.Task{}}, nil
	}
	probe := &tasks.Task{ContextID: q.ContextID, State: q.State}
	var (
		ix         taskIndex
		postFilter func(*tasks.Task) bool
	)
	switch {
	case owner != nil && q.ContextID != "" && q.State != "":
		ix = taskIndexes[idxOwnerCtxState]
	case owner != nil && q.ContextID != "":
		ix = taskIndexes[idxOwnerCtx]
	case owner != nil && q.State != "":
		ix = taskIndexes[idxOwnerState]
	case owner != nil:
		ix = taskIndexes[idxOwner]
	case q.State != "":
		ix = taskIndexes[idxAllState]
	default:
		ix = taskIndexes[idxAll]
	}
	if owner == nil && q.ContextID != "" {
		want := q.ContextID
		postFilter = func(t *tasks.Task) bool { return t.ContextID == want }
	}
	prefix := ix.prefix(owner, probe)
	var since uint64
	if !q.Since.IsZero() {
		// Inclusive, at millisecond resolution: a bound inside a millisecond
		// keeps only the timestamps at or after it.
		ns := q.Since.UnixNano()
		since = uint64((ns + int64(time.Millisecond) - 1) / int64(time.Millisecond))
		if ns < 0 {
			since = 0
		}
	}
	page := tasks.ListPage{Tasks: make([]tasks.Task, 0, min(q.PageSize, 64))}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(ix.bucket).Cursor()
		tb := tx.Bucket(bucketTasks)
		keyTS := func(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-24 : len(k)-16]) }
		inRange := func(k []byte) bool {
			return k != nil && len(k) == len(prefix)+24 && bytes.HasPrefix(k, prefix) && keyTS(k) >= since
		}
		load := func(k []byte) (tasks.Task, error) {
			v := tb.Get(k[len(k)-16:])
			if v == nil {
				return tasks.Task{}, fmt.Errorf("store: index %s points at missing task %s", ix.bucket, idString(k[len(k)-16:]))
			}
			return decodeTask(v)
		}

		// totalSize
		switch {
		case postFilter == nil && since == 0:
			page.Total = readCounter(tx.Bucket(bucketCounts), counterKey(ix.bucket, prefix))
		default:
			n := 0
			for k, _ := seekBefore(c, prefixEnd(prefix)); inRange(k); k, _ = c.Prev() {
				if postFilter != nil {
					t, err := load(k)
					if err != nil {
						return err
					}
					if !postFilter(&t) {
						continue
					}
				}
				n++
			}
			page.Total = n
		}

		start := prefixEnd(prefix)
		if q.After != nil {
			id, ok := idBytes(q.After.ID)
			if !ok {
				return errors.New("store: bad cursor id")
			}
			start = cat(prefix, tsID(q.After.StatusTime, id))
		}
		var last []byte
		for k, _ := seekBefore(c, start); inRange(k); k, _ = c.Prev() {
			if len(page.Tasks) == q.PageSize {
				// One more match exists: the page has a successor.
				if postFilter == nil {
					page.Next = &tasks.Cursor{StatusTime: fromMS(keyTS(last)), ID: idString(last[len(last)-16:])}
					return nil
				}
				t, err := load(k)
				if err != nil {
					return err
				}
				if postFilter(&t) {
					page.Next = &tasks.Cursor{StatusTime: fromMS(keyTS(last)), ID: idString(last[len(last)-16:])}
					return nil
				}
				continue
			}
			t, err := load(k)
			if err != nil {
				return err
			}
			if postFilter != nil && !postFilter(&t) {
				continue
			}
			page.Tasks = append(page.Tasks, t)
			last = k
		}
		return nil
	})
	if err != nil {
		return tasks.ListPage{}, err
	}
	return page, nil
}
