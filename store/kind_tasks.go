package store

import (
	"bytes"
	"fmt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
)

// The schema's Tasks: tasks (format 2 records, codec.go) and the indexes
// the task index code keeps (index.go, members.go): task_msgids for
// TasksByMessage, the counters of idx_task_state for TasksByOwnerState,
// idx_task_discw for TasksWorking, disc_members for TasksOfDiscussion.

// storedTask reads a task record of any format as a commands.Task. A
// format-2 record is read in place (its wire points into v); a format-1
// one is decoded and its wire encoded.
func storedTask(v []byte) (commands.Task, error) {
	if len(v) > 0 && v[0] == taskFormatJSON {
		t, err := decodeTaskJSON(v)
		if err != nil {
			return commands.Task{}, err
		}
		w, err := tasks.EncodeWire(&t)
		if err != nil {
			return commands.Task{}, err
		}
		t.StatusMessage, t.History, t.Artifacts = nil, nil, nil
		return commands.Task{Task: t, Wire: w}, nil
	}
	r, err := parseTask(v)
	if err != nil {
		return commands.Task{}, err
	}
	return commands.Task{Task: r.header(), Wire: r.wire}, nil
}

// taskKind maps commands.Tasks.
type taskKind struct{ docKind[commands.Task] }

// writeTask writes t, which was old (nil: a new task): its record, and
// its index entries and counters (moved when its state or status time
// moved); a new task is its owner's message id, and its owner a member of
// its discussion.
func writeTask(r *run, old, t *commands.Task, v []byte) error {
	if old != nil {
		if old.State == t.State && old.StatusTime.Equal(t.StatusTime) {
			return putTaskRecord(r.tx, &t.Task, v)
		}
		if err := r.taskMoves().add(&old.Task, -1); err != nil {
			return err
		}
		if err := r.taskMoves().add(&t.Task, +1); err != nil {
			return err
		}
		return putTaskRecord(r.tx, &t.Task, v)
	}
	if err := putTaskRecord(r.tx, &t.Task, v); err != nil {
		return err
	}
	var err error
	if r.bulk {
		err = r.taskMoves().add(&t.Task, +1)
	} else {
		err = indexTask(r.tx, &t.Task, +1)
	}
	if err != nil {
		return err
	}
	owner, ok1 := idBytes(t.OwnerID)
	tid, ok2 := idBytes(t.ID)
	dk, ok3 := idBytes(t.DiscussionID)
	if !ok1 || !ok2 || !ok3 {
		return errBadID("task", t.ID)
	}
	if err := r.tx.Bucket(bucketTaskMsgIDs).Put(msgIDKey(owner, t.MessageID), tid); err != nil {
		return err
	}
	return addMember(r.tx, dk, owner, tid)
}

// taskMoves is the run's batch of task index moves, applied once at the
// end of its write plan (a reply that completes 1,000 tasks moves 5,000
// entries, in key order).
func (r *run) taskMoves() *indexBatch {
	if r.moves == nil {
		r.moves = newIndexBatch()
	}
	return r.moves
}

// inWorking reports whether t is in TasksWorking (the schema's: the
// WORKING tasks), which idx_task_discw lists.
func inWorking(t *tasks.Task) bool {
	_, ok := commands.TasksWorking.Entry(&commands.Task{Task: *t})
	return ok
}

func init() {
	k := &taskKind{docKind[commands.Task]{
		kind: commands.Tasks, bucket: bucketTasks, parts: []part{pULID},
		decode: func(_, v []byte) (commands.Task, error) { return storedTask(v) },
		owner: func(v []byte) (string, error) {
			if err := owned(v, ""); err != nil {
				return "", err
			}
			if v[0] == taskFormatJSON {
				t, err := decodeTaskJSON(v)
				return t.OwnerID, err
			}
			rt, err := parseTask(v)
			return string(rt.owner), err
		},
		encode: func(t *commands.Task) ([]byte, error) { return encodeTaskWire(&t.Task, &t.Wire), nil },
		write:  writeTask,
	}}
	scans := map[storage.Ix]func(*run, *storage.Range, storage.Key, func(storage.Key, any) bool) error{}
	// task_msgids: owner (16) | message id -> task id (16).
	scans[commands.TasksByMessage] = func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
		ps := []part{pULID, pRest}
		pb, ok := keyBytes(ps, prefix)
		if !ok {
			return nil
		}
		if len(prefix) == 2 { // a whole key: one entry at most, read as such
			id := r.tx.Bucket(bucketTaskMsgIDs).Get(pb)
			if len(id) != 16 {
				return nil
			}
			key := storage.K(prefix[0], prefix[1], idString(id))
			if q.Keys != nil {
				fn(key, nil)
				return nil
			}
			t, err := storedTask(r.tx.Bucket(bucketTasks).Get(id))
			if err != nil {
				return err
			}
			fn(key, &t)
			return nil
		}
		return k.walkRefs(r, q, bucketTaskMsgIDs, pb, nil, true, func(ik, v []byte) (storage.Key, []byte, bool) {
			key, ok := keyOf(ps, ik)
			if !ok || len(v) != 16 || (len(prefix) == 2 && !bytes.Equal(ik, pb)) {
				return nil, nil, false // a longer message id under a shorter one's bytes
			}
			return append(key, idString(v)), v, true
		}, fn)
	}
	// idx_task_discw: discussion id (16) | task id (16) -> owner (16).
	scans[commands.TasksWorking] = func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
		ps := []part{pULID, pULID}
		pb, ok := keyBytes(ps, prefix)
		if !ok {
			return nil
		}
		return k.walkRefs(r, q, bucketTaskDiscWorking, pb, scanEnd(ps, q), false, func(ik, _ []byte) (storage.Key, []byte, bool) {
			key, ok := keyOf(ps, ik)
			return key, ik[16:], ok
		}, fn)
	}
	// disc_members: discussion id (16) | owner (16) -> task ids (16 each).
	scans[commands.TasksOfDiscussion] = func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
		ps := []part{pULID, pULID}
		pb, ok := keyBytes(ps, prefix)
		if !ok {
			return nil
		}
		if q.Reverse || q.To != nil {
			return fmt.Errorf("store: %s is walked forward, whole", commands.TasksOfDiscussion.Name())
		}
		tb := r.tx.Bucket(bucketTasks)
		var err error
		walk(r.tx.Bucket(bucketDiscMembers), pb, nil, false, func(ik, v []byte) bool {
			lead, ok := keyOf(ps, ik)
			if !ok {
				return true // kfa check reports it
			}
			for i := 0; i+16 <= len(v); i += 16 {
				key := append(lead[:2:2], idString(v[i:i+16]))
				var rec any
				if q.Keys == nil {
					var t commands.Task
					if t, err = storedTask(tb.Get(v[i : i+16])); err != nil {
						return false
					}
					rec = &t
				}
				if !fn(key, rec) {
					return false
				}
			}
			return true
		})
		return err
	}
	k.scans = scans
	// The counters of idx_task_state: owner (16) | state (1).
	k.counts = map[storage.Ix]func(*run, storage.Key) (int, error){
		commands.TasksByOwnerState: func(r *run, prefix storage.Key) (int, error) {
			owner, ok := idBytes(prefix[0])
			if len(prefix) != 2 || !ok {
				return 0, nil
			}
			return readCounter(r.tx.Bucket(bucketCounts),
				counterKey(bucketTaskByState, cat(owner, []byte{stateByte(a2a.TaskState(prefix[1]))}))), nil
		},
	}
	mapped[commands.Tasks] = k
}
