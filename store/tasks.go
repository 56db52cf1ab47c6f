package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/store/internal/storedoc"
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
	task, discussion, push []byte
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
	if c.Push != nil {
		if r.push, err = storedoc.EncodePushConfig(c.Push); err != nil {
			return r, err
		}
	}
	return r, nil
}

// CreateAsk implements tasks.Store. Its checks run first in a read
// transaction: an ask they refuse (or a retry they answer) costs no
// encoding and no place in the write queue. The write transaction checks
// again, since the state may have moved meanwhile.
func (s *DB) CreateAsk(_ context.Context, c tasks.CreateAsk) (tasks.Task, bool, error) {
	if _, ok := idBytes(c.Task.OwnerID); !ok {
		return tasks.Task{}, false, errBadID("owner", c.Task.OwnerID)
	}
	var retry *tasks.Task
	err := s.db.View(func(tx *bolt.Tx) error {
		ck, err := checkAsk(tx, &c, false)
		retry = ck.retry
		return err
	})
	if err != nil {
		return tasks.Task{}, false, unrefuse(err)
	}
	if retry != nil {
		return *retry, false, nil
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
		out, created, err = s.createAsk(tx, &c, &recs, nil)
		return err
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return out, created, nil
}

// askCheck is what the checks of an ask found.
type askCheck struct {
	owner, disc []byte
	retry       *tasks.Task // the first task of this message id: an idempotent retry
	win         *window     // the owner's ask window, to write with the task
}

// checkAsk is the reading part of an ask: the idempotent retry, the
// owner's ask window, the join, the open-task bound. It writes nothing;
// what it refuses is a refusal. bulk is a bulk load, which takes neither
// a rate nor a bound (both read what earlier asks of the load have not
// written yet).
func checkAsk(tx *bolt.Tx, c *tasks.CreateAsk, bulk bool) (askCheck, error) {
	var ck askCheck
	owner, ok := idBytes(c.Task.OwnerID)
	if !ok {
		return ck, refuse(errBadID("owner", c.Task.OwnerID))
	}
	ck.owner = owner
	// Idempotent retry: the first task for this message id, unchanged.
	if id := tx.Bucket(bucketTaskMsgIDs).Get(msgIDKey(owner, c.Task.MessageID)); id != nil {
		t, err := getTask(tx, idString(id))
		if err != nil {
			return ck, refuse(err)
		}
		ck.retry = &t
		return ck, nil
	}
	if bulk && (c.AskRate.Enabled() || c.MaxOpen > 0) {
		return ck, errors.New("store: a bulk load takes no ask rate and no open-task bound")
	}
	// The owner's ask window: refused here, nothing is spent; allowed, it
	// moves on with the writes.
	var err error
	if ck.win, err = takeWindow(tx, windowAsk, owner, c.AskRate, c.Task.CreatedAt); err != nil {
		return ck, err
	}
	discID := c.Task.DiscussionID
	dk, ok := idBytes(discID)
	if c.JoinDiscussionID != "" {
		if !ok {
			return ck, refuse(discussions.ErrNotFound)
		}
		v := tx.Bucket(bucketDiscussions).Get(dk)
		if v == nil {
			return ck, refuse(discussions.ErrNotFound)
		}
		d, err := decodeDiscussion(v)
		if err != nil {
			return ck, refuse(err)
		}
		if d.Status != discussions.StatusOpen {
			return ck, refuse(discussions.ErrAnswered)
		}
	} else if !ok {
		return ck, refuse(errBadID("discussion", discID))
	}
	ck.disc = dk
	if c.MaxOpen > 0 {
		open := readCounter(tx.Bucket(bucketCounts), counterKey(bucketTaskByState, cat(owner, []byte{stateByte(a2a.TaskStateWorking)})))
		if open >= c.MaxOpen {
			return ck, refuse(tasks.ErrTooManyOpen)
		}
	}
	return ck, nil
}

// createAsk is the transaction of CreateAsk: checkAsk, then the writes.
// Bulk loading runs the same function, so a loaded task is stored exactly
// as an asked one; it passes an indexBatch, which collects the index
// entries and counters to write them all at the end in key order.
func (s *DB) createAsk(tx *bolt.Tx, c *tasks.CreateAsk, recs *askRecords, batch *indexBatch) (tasks.Task, bool, error) {
	ck, err := checkAsk(tx, c, batch != nil)
	if err != nil {
		return tasks.Task{}, false, err
	}
	if ck.retry != nil {
		return *ck.retry, false, nil
	}
	owner, dk, win := ck.owner, ck.disc, ck.win
	// Checks are done; from here on only writes.
	if c.JoinDiscussionID == "" {
		if err := putDiscussionRecord(tx, &c.Discussion, recs.discussion, ""); err != nil {
			return tasks.Task{}, false, err
		}
	}
	if err := putWindow(tx, win); err != nil {
		return tasks.Task{}, false, err
	}
	t := c.Task
	if err := putTaskRecord(tx, &t, recs.task); err != nil {
		return tasks.Task{}, false, err
	}
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
	if err := addMember(tx, dk, owner, tid); err != nil {
		return tasks.Task{}, false, err
	}
	if c.Push != nil {
		if err := putPushConfigRecord(tx, c.Push, recs.push); err != nil {
			return tasks.Task{}, false, err
		}
	}
	evs := []changelog.Event{{Kind: changelog.TaskCreated, ID: t.ID, Owner: t.OwnerID, Ref: t.DiscussionID, At: t.CreatedAt}}
	if c.JoinDiscussionID == "" {
		evs = append(evs, changelog.Event{Kind: changelog.DiscussionOpened, ID: c.Discussion.ID, Owner: c.Discussion.AuthorID,
			At: c.Discussion.CreatedAt})
	}
	if err := s.appendEvents(tx, evs, t.CreatedAt); err != nil {
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

// CancelTask implements tasks.Store. Like CreateAsk it decides on a read
// first: a refused cancel, or one of a task already canceled, never
// queues a write.
func (s *DB) CancelTask(_ context.Context, ownerID, id string, at time.Time) (tasks.Task, bool, error) {
	var (
		out     tasks.Task
		changed bool
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		_, t, ch, err := checkCancel(tx, ownerID, id, at)
		out, changed = t, ch
		return err
	})
	if err != nil {
		return tasks.Task{}, false, unrefuse(err)
	}
	if !changed {
		return out, false, nil
	}
	err = s.update(func(tx *bolt.Tx) error {
		old, t, ch, err := checkCancel(tx, ownerID, id, at)
		out, changed = t, ch
		if err != nil || !ch {
			return err
		}
		if err := replaceTask(tx, &old, &t, nil); err != nil {
			return err
		}
		due, err := enqueuePush(tx, &t)
		if err != nil {
			return err
		}
		return s.appendEvents(tx, append([]changelog.Event{taskMoved(&t)}, due...), at)
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return out, changed, nil
}

// checkCancel applies Task.Cancel to the stored task, if ownerID owns it
// (any owner when ownerID is ""), without writing: the task before and
// after, and whether it changed. What it refuses is a refusal.
func checkCancel(tx *bolt.Tx, ownerID, id string, at time.Time) (old, t tasks.Task, changed bool, err error) {
	// The header decides a refusal: the messages are decoded only for a
	// task the cancel shows or changes.
	k, ok := idBytes(id)
	if !ok {
		return old, t, false, refuse(tasks.ErrNotFound)
	}
	v := tx.Bucket(bucketTasks).Get(k)
	h, err := headerOf(v)
	if err != nil {
		return old, t, false, refuse(err)
	}
	if ownerID != "" && h.OwnerID != ownerID {
		return old, tasks.Task{}, false, refuse(tasks.ErrNotFound)
	}
	if _, err := h.Cancel(at); err != nil {
		return old, tasks.Task{}, false, refuse(err)
	}
	if t, err = decodeTask(v); err != nil {
		return old, t, false, refuse(err)
	}
	old = t
	if changed, err = t.Cancel(at); err != nil {
		return old, tasks.Task{}, false, refuse(err)
	}
	return old, t, changed, nil
}

// taskMoved is the log event of t's transition.
func taskMoved(t *tasks.Task) changelog.Event {
	return changelog.Event{Kind: changelog.TaskMoved, ID: t.ID, Owner: t.OwnerID, Ref: string(t.State), At: t.StatusTime}
}
