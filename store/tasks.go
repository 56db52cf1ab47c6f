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

// replaceTask writes t, which was old before a transition, moving its index
// entries when the state or status timestamp changed. acc, when not nil,
// collects the counter changes for the caller to apply once.
func replaceTask(tx *bolt.Tx, old, t *tasks.Task, acc counterDeltas) error {
	v, err := encodeTask(t)
	if err != nil {
		return err
	}
	return replaceTaskRecord(tx, old, t, v, acc)
}

// replaceTaskRecord is replaceTask with t already encoded as v.
func replaceTaskRecord(tx *bolt.Tx, old, t *tasks.Task, v []byte, acc counterDeltas) error {
	if old.State != t.State || !old.StatusTime.Equal(t.StatusTime) {
		if err := indexTaskAcc(tx, old, -1, acc); err != nil {
			return err
		}
		if err := indexTaskAcc(tx, t, +1, acc); err != nil {
			return err
		}
	}
	return putTaskRecord(tx, t, v)
}

func msgIDKey(owner []byte, messageID string) []byte { return cat(owner, []byte(messageID)) }

// askRecords are the encoded records one ask writes, made before its
// transaction: a group-commit function may run more than once, and the
// encoding is the same every time, so it is done once and outside the
// single writer's critical section.
type askRecords struct {
	task, discussion []byte
}

func encodeAsk(c *tasks.CreateAsk) (askRecords, error) {
	var (
		r   askRecords
		err error
	)
	if r.task, err = encodeTask(&c.Task); err != nil {
		return r, err
	}
	if c.JoinDiscussionID == "" {
		if r.discussion, err = encodeJSON(&c.Discussion); err != nil {
			return r, err
		}
	}
	return r, nil
}

// CreateAsk implements tasks.Store.
func (s *DB) CreateAsk(_ context.Context, c tasks.CreateAsk) (tasks.Task, bool, error) {
	if _, ok := idBytes(c.Task.OwnerID); !ok {
		return tasks.Task{}, false, errBadID("owner", c.Task.OwnerID)
	}
	recs, err := encodeAsk(&c)
	if err != nil {
		return tasks.Task{}, false, err
	}
	var (
		out     tasks.Task
		created bool
	)
	err = s.update(func(tx *bolt.Tx) error {
		var err error
		out, created, err = createAsk(tx, &c, &recs, nil)
		return err
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return out, created, nil
}

// createAsk is the transaction of CreateAsk: the idempotency and join
// checks, the open-task bound, then the writes. Bulk loading runs the same
// function, so a loaded task is stored exactly as an asked one; it passes
// an indexBatch, which collects the index entries and counters to write
// them all at the end in key order (c.MaxOpen must then be 0: the bound
// reads a counter).
func createAsk(tx *bolt.Tx, c *tasks.CreateAsk, recs *askRecords, batch *indexBatch) (tasks.Task, bool, error) {
	owner, ok := idBytes(c.Task.OwnerID)
	if !ok {
		return tasks.Task{}, false, refuse(errBadID("owner", c.Task.OwnerID))
	}
	// Idempotent retry: the first task for this message id, unchanged.
	if id := tx.Bucket(bucketTaskMsgIDs).Get(msgIDKey(owner, c.Task.MessageID)); id != nil {
		t, err := getTask(tx, idString(id))
		if err != nil {
			return tasks.Task{}, false, refuse(err)
		}
		return t, false, nil
	}
	discID := c.Task.DiscussionID
	dk, ok := idBytes(discID)
	if c.JoinDiscussionID != "" {
		if !ok {
			return tasks.Task{}, false, refuse(discussions.ErrNotFound)
		}
		v := tx.Bucket(bucketDiscussions).Get(dk)
		if v == nil {
			return tasks.Task{}, false, refuse(discussions.ErrNotFound)
		}
		d, err := decodeDiscussion(v)
		if err != nil {
			return tasks.Task{}, false, refuse(err)
		}
		if d.Status != discussions.StatusOpen {
			return tasks.Task{}, false, refuse(discussions.ErrAnswered)
		}
	} else if !ok {
		return tasks.Task{}, false, refuse(errBadID("discussion", discID))
	}
	counts := tx.Bucket(bucketCounts)
	if c.MaxOpen > 0 {
		if batch != nil {
			return tasks.Task{}, false, errors.New("store: an open-task bound needs its counter written at once")
		}
		open := readCounter(counts, counterKey(bucketTaskByState, cat(owner, []byte{stateByte(a2a.TaskStateWorking)})))
		if open >= c.MaxOpen {
			return tasks.Task{}, false, refuse(tasks.ErrTooManyOpen)
		}
	}
	// Checks are done; from here on only writes.
	if c.JoinDiscussionID == "" {
		if err := putDiscussionRecord(tx, &c.Discussion, recs.discussion, ""); err != nil {
			return tasks.Task{}, false, err
		}
	}
	t := c.Task
	if err := putTaskRecord(tx, &t, recs.task); err != nil {
		return tasks.Task{}, false, err
	}
	var err error
	if batch != nil {
		err = batch.add(&t, +1)
	} else {
		err = indexTask(tx, &t, +1)
	}
	if err != nil {
		return tasks.Task{}, false, err
	}
	tid, _ := idBytes(t.ID)
	if err := tx.Bucket(bucketTaskMsgIDs).Put(msgIDKey(owner, t.MessageID), tid); err != nil {
		return tasks.Task{}, false, err
	}
	if err := tx.Bucket(bucketTaskByDisc).Put(cat(dk, tid), owner); err != nil {
		return tasks.Task{}, false, err
	}
	return t, true, nil
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

// ViewSnapshot implements tasks.Store: fn sees the task's stored wire
// JSON in place, inside the read transaction.
func (s *DB) ViewSnapshot(_ context.Context, id string, fn func(*tasks.Snapshot) error) error {
	k, ok := idBytes(id)
	if !ok {
		return tasks.ErrNotFound
	}
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTasks).Get(k)
		if v == nil {
			return tasks.ErrNotFound
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
			return refuse(err)
		}
		if ownerID != "" && t.OwnerID != ownerID {
			return refuse(tasks.ErrNotFound)
		}
		old := t
		ch, err := t.Cancel(at)
		if err != nil {
			return refuse(err)
		}
		if ch {
			if err := replaceTask(tx, &old, &t, nil); err != nil {
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
	page := tasks.ListPage{Tasks: make([]tasks.Task, 0, min(q.PageSize, 64))}
	next, total, err := s.listTasks(q, func(v []byte) error {
		t, err := decodeTask(v)
		if err == nil {
			page.Tasks = append(page.Tasks, t)
		}
		return err
	})
	if err != nil {
		return tasks.ListPage{}, err
	}
	page.Next, page.Total = next, total
	return page, nil
}

// ViewSnapshots implements tasks.Store: ListTasks, fn seeing each task's
// stored wire JSON in place, inside the read transaction.
func (s *DB) ViewSnapshots(_ context.Context, q tasks.ListQuery, fn func(*tasks.Snapshot) error) (*tasks.Cursor, int, error) {
	return s.listTasks(q, func(v []byte) error {
		snap, err := snapshotOf(v)
		if err != nil {
			return err
		}
		return fn(&snap)
	})
}

// listTasks walks one page of q, calling emit with each task record in
// order (the record is valid only during the call). It returns the cursor
// of the next page and totalSize.
func (s *DB) listTasks(q tasks.ListQuery, emit func(v []byte) error) (next *tasks.Cursor, total int, err error) {
	var owner []byte
	if q.OwnerID != "" {
		var ok bool
		if owner, ok = idBytes(q.OwnerID); !ok {
			return nil, 0, nil
		}
	}
	if len(q.ContextID) > 255 {
		return nil, 0, nil
	}
	probe := &tasks.Task{ContextID: q.ContextID, State: q.State}
	var (
		ix         taskIndex
		postFilter func(v []byte) (bool, error)
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
		postFilter = func(v []byte) (bool, error) {
			ctx, err := taskContext(v)
			return ctx == want, err
		}
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
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(ix.bucket).Cursor()
		tb := tx.Bucket(bucketTasks)
		keyTS := func(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-24 : len(k)-16]) }
		inRange := func(k []byte) bool {
			return k != nil && len(k) == len(prefix)+24 && bytes.HasPrefix(k, prefix) && keyTS(k) >= since
		}
		load := func(k []byte) ([]byte, error) {
			v := tb.Get(k[len(k)-16:])
			if v == nil {
				return nil, fmt.Errorf("store: index %s points at missing task %s", ix.bucket, idString(k[len(k)-16:]))
			}
			return v, nil
		}
		// matches loads the task at k and applies the post filter.
		matches := func(k []byte) ([]byte, bool, error) {
			v, err := load(k)
			if err != nil || postFilter == nil {
				return v, err == nil, err
			}
			ok, err := postFilter(v)
			return v, ok, err
		}

		// totalSize
		switch {
		case postFilter == nil && since == 0:
			total = readCounter(tx.Bucket(bucketCounts), counterKey(ix.bucket, prefix))
		default:
			n := 0
			for k, _ := seekBefore(c, prefixEnd(prefix)); inRange(k); k, _ = c.Prev() {
				if postFilter != nil {
					if _, ok, err := matches(k); err != nil {
						return err
					} else if !ok {
						continue
					}
				}
				n++
			}
			total = n
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
		n := 0
		for k, _ := seekBefore(c, start); inRange(k); k, _ = c.Prev() {
			if n == q.PageSize {
				// One more match exists: the page has a successor.
				if postFilter != nil {
					if _, ok, err := matches(k); err != nil {
						return err
					} else if !ok {
						continue
					}
				}
				next = &tasks.Cursor{StatusTime: fromMS(keyTS(last)), ID: idString(last[len(last)-16:])}
				return nil
			}
			v, ok, err := matches(k)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if err := emit(v); err != nil {
				return err
			}
			n++
			last = k
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return next, total, nil
}
