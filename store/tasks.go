package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/asknet"
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

// replaceTaskRecord writes t, encoded as v, which was old before a
// transition, moving its index entries when the state or status timestamp
// changed. acc, when not nil, collects the counter changes for the caller
// to apply once.
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

// askRecords are the encoded records one ask writes, made once: a command
// may run more than once, and the encoding is the same every time (the
// decision writes the command's task and discussion as they are), so it
// is done the first time the ask is allowed, in the read that decides
// before the ask queues, outside the single writer's critical section.
type askRecords struct {
	task, discussion, push []byte
	done                   bool // encoded
}

func encodeAsk(c *tasks.CreateAsk) (askRecords, error) {
	var err error
	r := askRecords{done: true}
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

// CreateAsk implements tasks.Store: load, asknet.DecideAsk, persist. The
// decision runs first in a read transaction, so an ask it refuses (or a
// retry it answers) costs no place in the write queue.
func (s *DB) CreateAsk(_ context.Context, c tasks.CreateAsk) (tasks.AskResult, error) {
	var (
		recs askRecords // encoded by the first decision that allows the ask
		st   asknet.AskState
		out  asknet.AskOutcome
	)
	if err := s.exec(s.askCommand(&c, &recs, nil, &st, &out)); err != nil {
		return tasks.AskResult{}, err
	}
	return askResult(&st, &out), nil
}

// askResult is the answer to an ask decided as out on st.
func askResult(st *asknet.AskState, out *asknet.AskOutcome) tasks.AskResult {
	res := tasks.AskResult{Task: out.Task, Created: !out.Retry, Window: st.Window}
	if out.Window != nil {
		res.Window = *out.Window
	}
	return res
}

// loadAsk loads what an ask decides on: the owner (the asker), its task
// of the message id, its ask window and open tasks, the joined
// discussion.
func loadAsk(tx *bolt.Tx, c *tasks.CreateAsk) (asknet.AskState, error) {
	var st asknet.AskState
	owner, ok := idBytes(c.Task.OwnerID)
	if !ok {
		return st, errBadID("owner", c.Task.OwnerID)
	}
	var err error
	if st.Asker, err = loadAgent(tx, c.Task.OwnerID); err != nil {
		return st, err
	}
	st.Window = readWindow(tx, windowAsk, owner)
	if id := tx.Bucket(bucketTaskMsgIDs).Get(msgIDKey(owner, c.Task.MessageID)); id != nil {
		t, err := getTask(tx, idString(id))
		if err != nil {
			return st, err
		}
		st.Retry = &t
		return st, nil
	}
	st.Open = readCounter(tx.Bucket(bucketCounts), counterKey(bucketTaskByState, cat(owner, []byte{stateByte(a2a.TaskStateWorking)})))
	if c.JoinDiscussionID != "" {
		d, _, err := getDiscussion(tx, c.JoinDiscussionID)
		switch {
		case err == nil:
			st.Join = &d
		case !errors.Is(err, discussions.ErrNotFound):
			return st, err
		}
	}
	return st, nil
}

// askCommand is the command of ask c, whose records recs are encoded
// before it runs (DecideAsk writes the command's task and discussion as
// they are, and a command may run more than once). The bulk loader passes
// batch, which collects the index entries and counters to write them all
// at the end in key order. st and out receive the state and the decision.
func (s *DB) askCommand(c *tasks.CreateAsk, recs *askRecords, batch *indexBatch, st *asknet.AskState, out *asknet.AskOutcome) command {
	return func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		var err error
		if *st, err = loadAsk(tx, c); err != nil {
			return nil, err
		}
		o, err := asknet.DecideAsk(*st, *c, c.Task.CreatedAt)
		if err != nil {
			return nil, err
		}
		*out = o
		if o.Retry {
			return nil, nil
		}
		// Encoded once, when first allowed: in the read that decides
		// before the ask queues, outside the single writer, and never for
		// an ask that is refused.
		if !recs.done {
			if *recs, err = encodeAsk(c); err != nil {
				return nil, err
			}
		}
		return func(tx *bolt.Tx) error { return s.persistAsk(tx, out, recs, batch) }, nil
	}
}

// persistAsk writes what DecideAsk decided.
func (s *DB) persistAsk(tx *bolt.Tx, o *asknet.AskOutcome, recs *askRecords, batch *indexBatch) error {
	t := &o.Task
	owner, _ := idBytes(t.OwnerID)
	dk, ok := idBytes(t.DiscussionID)
	if !ok {
		return errBadID("discussion", t.DiscussionID)
	}
	if o.Discussion != nil {
		if err := putDiscussionRecord(tx, o.Discussion, recs.discussion, 0); err != nil {
			return err
		}
		if err := putPost(tx, owner, dk, nil); err != nil {
			return err
		}
	}
	if o.Window != nil {
		if err := putWindow(tx, windowAsk, owner, *o.Window); err != nil {
			return err
		}
	}
	if err := putTaskRecord(tx, t, recs.task); err != nil {
		return err
	}
	var err error
	if batch != nil {
		err = batch.add(t, +1)
	} else {
		err = indexTask(tx, t, +1)
	}
	if err != nil {
		return err
	}
	tid, _ := idBytes(t.ID)
	if err := tx.Bucket(bucketTaskMsgIDs).Put(msgIDKey(owner, t.MessageID), tid); err != nil {
		return err
	}
	if err := addMember(tx, dk, owner, tid); err != nil {
		return err
	}
	if o.Push != nil {
		if err := putPushConfigRecord(tx, o.Push, recs.push); err != nil {
			return err
		}
	}
	return s.appendEvents(tx, o.Events, t.CreatedAt)
}

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

// CancelTask implements tasks.Store: load, tasks.DecideCancel, persist.
// Like CreateAsk it decides on a read first: a refused cancel, or one of
// a task already canceled, never queues a write. The decision sees the
// task's header, so a refusal never decodes the messages, and a foreign
// task costs what an unknown one does.
func (s *DB) CancelTask(_ context.Context, ownerID, id string, at time.Time) (tasks.Task, bool, error) {
	var (
		out  tasks.CancelOutcome
		full tasks.Task
	)
	err := s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		v, st, err := loadCancel(tx, ownerID, id)
		if err != nil {
			return nil, err
		}
		if out, err = tasks.DecideCancel(st, ownerID, at); err != nil {
			return nil, err
		}
		if full, err = decodeTask(v); err != nil {
			return nil, err
		}
		full = tasks.WithStatus(full, out.Task)
		if !out.Changed {
			return nil, nil
		}
		return func(tx *bolt.Tx) error {
			old := *st.Task
			if err := s.persistMove(tx, v, &old, &out.Task, nil, nil); err != nil {
				return err
			}
			if err := putDeliveries(tx, out.Deliveries); err != nil {
				return err
			}
			return s.appendEvents(tx, out.Events, at)
		}, nil
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return full, out.Changed, nil
}

// loadCancel loads what a cancel by ownerID decides on: the owner (none
// for the operator's, ownerID ""), the task's header (and its record),
// and its push configs. Like every load by task
// id, it is a load by id and owner: another owner's task is loaded as an
// unknown one is, before anything of it is decoded, so that its configs
// are never read and the answer's time does not tell that it exists.
func loadCancel(tx *bolt.Tx, ownerID, id string) ([]byte, tasks.CancelState, error) {
	var st tasks.CancelState
	if ownerID != "" {
		var err error
		if st.Owner, err = loadAgent(tx, ownerID); err != nil {
			return nil, st, err
		}
	}
	k, v, err := ownedTask(tx, ownerID, id)
	if v == nil || err != nil {
		return nil, st, err
	}
	h, err := headerOf(v)
	if err != nil {
		return nil, st, err
	}
	st.Task = &h
	if st.Configs, err = pushConfigsOf(tx, k); err != nil {
		return nil, st, err
	}
	return v, st, nil
}

// persistMove writes the transition of the task stored as v from old to
// moved (decision headers), moving its index entries: into moves when
// given (collected for the caller to apply once), else at once. A
// format-2 record is rewritten without decoding its history: the new
// record reuses the stored history bytes, and only the status and the
// artifacts are encoded. artifacts, when not nil, carries the artifacts'
// JSON from one task to the next of the same reply, which gives them all
// the same artifacts.
func (s *DB) persistMove(tx *bolt.Tx, v []byte, old, moved *tasks.Task, moves *indexBatch, artifacts *[]byte) error {
	rec, err := movedRecord(v, moved, artifacts)
	if err != nil {
		return err
	}
	if moves != nil {
		if err := moves.add(old, -1); err != nil {
			return err
		}
		if err := moves.add(moved, +1); err != nil {
			return err
		}
		return putTaskRecord(tx, moved, rec)
	}
	return replaceTaskRecord(tx, old, moved, rec, nil)
}

// movedRecord is the record of the task stored as v after its move to
// moved's status and artifacts.
func movedRecord(v []byte, moved *tasks.Task, artifacts *[]byte) ([]byte, error) {
	if len(v) > 0 && v[0] == taskFormatJSON {
		full, err := decodeTask(v)
		if err != nil {
			return nil, err
		}
		full = tasks.WithStatus(full, *moved)
		return encodeTask(&full)
	}
	r, err := parseTask(v)
	if err != nil {
		return nil, err
	}
	w := r.wire
	if w.Status, err = tasks.EncodeStatus(moved); err != nil {
		return nil, err
	}
	switch {
	case len(moved.Artifacts) == 0:
		w.Artifacts = nil
	case artifacts != nil && *artifacts != nil:
		w.Artifacts = *artifacts
	default:
		if w.Artifacts, err = tasks.EncodeArtifacts(moved); err != nil {
			return nil, err
		}
		if artifacts != nil {
			*artifacts = w.Artifacts
		}
	}
	return encodeTaskWire(moved, &w), nil
}
