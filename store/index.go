package store

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// Task indexes. Besides these, idx_task_discw lists the WORKING tasks of
// each discussion (discussion id | task id -> owner); it moves with them,
// in the same functions.
//
// Every key is prefix | status timestamp (8, big endian ms) | task id
// (16); reading a bucket backwards from the end of a prefix yields newest
// first, ties by id descending, which is the ListTasks order.
//
// The four counted indexes keep a counter per prefix in the counts bucket
// (for totalSize, and the open-task bound) and have empty values. The
// context index is not counted: its value is the task's owner (16) and
// state (1), so that a listing of one context, with or without an owner
// or a state, is a scan of the context's range that filters on the
// values without reading a task (a context holds few tasks). Until
// schema 6 the owner's context listings had two indexes of their own
// (idx_task_ctx, idx_task_ctxst) and every context three counters; an
// ask wrote each of them on a page of its own.
type taskIndex struct {
	bucket  []byte
	prefix  func(owner []byte, t *tasks.Task) []byte
	counted bool
	// value is what the entry holds (nil: nothing).
	value func(owner []byte, t *tasks.Task) []byte
}

var taskIndexes = []taskIndex{
	{bucket: bucketTaskAll, prefix: func(_ []byte, _ *tasks.Task) []byte { return nil }, counted: true},
	{bucket: bucketTaskAllSt, prefix: func(_ []byte, t *tasks.Task) []byte { return []byte{stateByte(t.State)} }, counted: true},
	{bucket: bucketTaskByOwner, prefix: func(o []byte, _ *tasks.Task) []byte { return o }, counted: true},
	{bucket: bucketTaskByState, prefix: func(o []byte, t *tasks.Task) []byte { return cat(o, []byte{stateByte(t.State)}) }, counted: true},
	// Every task of one context, whoever owns it.
	{bucket: bucketTaskAllCtx, prefix: func(_ []byte, t *tasks.Task) []byte { return ctxPart(t.ContextID) }, value: ctxValue},
}

// The index buckets, in taskIndexes order.
const (
	idxAll = iota
	idxAllState
	idxOwner
	idxOwnerState
	idxAllCtx
	nTaskIndexes
)

// ctxValue is a context index entry's value: owner (16) | state (1).
func ctxValue(owner []byte, t *tasks.Task) []byte {
	return append(bytes.Clone(owner), stateByte(t.State))
}

// indexValue is t's value in index ix.
func indexValue(ix int, owner []byte, t *tasks.Task) []byte {
	if f := taskIndexes[ix].value; f != nil {
		return f(owner, t)
	}
	return nil
}

// ctxPart is a context id with its length in front, so that no context id
// is a prefix of another's key range.
func ctxPart(ctx string) []byte {
	return append([]byte{byte(len(ctx))}, ctx...)
}

// stateByte is the proto number of a state, used in keys.
func stateByte(s a2a.TaskState) byte {
	for i, st := range []a2a.TaskState{
		a2a.TaskStateUnspecified, a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted,
		a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateInputRequired, a2a.TaskStateRejected,
		a2a.TaskStateAuthRequired,
	} {
		if st == s {
			return byte(i)
		}
	}
	return 0
}

// stateOf is the state of a proto number (unspecified when unknown), the
// inverse of stateByte (taskStates is in stateByte order).
func stateOf(b byte) a2a.TaskState {
	if int(b) < len(taskStates) {
		return taskStates[b]
	}
	return a2a.TaskStateUnspecified
}

func tsID(t time.Time, id []byte) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, ms(t))
	return append(k, id...)
}

func counterKey(bucket, prefix []byte) []byte {
	return cat(bucket, []byte{0}, prefix)
}

// counterDeltas collects counter changes of one transaction, to apply
// each changed counter once (apply) instead of once per task: a reply that
// completes 1,000 tasks moves 8,000 index counters, most of them back and
// forth on the same few keys.
type counterDeltas map[string]int64

// apply writes the collected changes, in key order.
func (d counterDeltas) apply(tx *bolt.Tx) error {
	counts := tx.Bucket(bucketCounts)
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if d[k] == 0 {
			continue
		}
		if err := counter(counts, []byte(k), d[k]); err != nil {
			return err
		}
	}
	return nil
}

// indexBatch collects the index changes of many tasks in one transaction
// and applies them bucket by bucket, each bucket's in key order: a reply
// that completes 1,000 tasks moves 5,000 index entries, and in order each
// bucket's changes walk its pages once instead of jumping between them.
type indexBatch struct {
	dels   [nTaskIndexes][][]byte
	puts   [nTaskIndexes][][2][]byte // key, value
	counts counterDeltas
	// The discussion's working-task entries (idx_task_discw): key and owner.
	workingDels [][]byte
	workingPuts [][2][]byte
}

func newIndexBatch() *indexBatch { return &indexBatch{counts: counterDeltas{}} }

// add records adding (delta=+1) or removing (delta=-1) every index entry
// of t.
func (b *indexBatch) add(t *tasks.Task, delta int64) error {
	owner, ok := idBytes(t.OwnerID)
	if !ok {
		return errBadID("owner", t.OwnerID)
	}
	id, ok := idBytes(t.ID)
	if !ok {
		return errBadID("task", t.ID)
	}
	tail := tsID(t.StatusTime, id)
	for i, ix := range taskIndexes {
		p := ix.prefix(owner, t)
		if delta > 0 {
			b.puts[i] = append(b.puts[i], [2][]byte{cat(p, tail), indexValue(i, owner, t)})
		} else {
			b.dels[i] = append(b.dels[i], cat(p, tail))
		}
		if ix.counted {
			b.counts[string(counterKey(ix.bucket, p))] += delta
		}
	}
	if inWorking(t) {
		k, err := workingKey(t, id)
		if err != nil {
			return err
		}
		if delta > 0 {
			b.workingPuts = append(b.workingPuts, [2][]byte{k, owner})
		} else {
			b.workingDels = append(b.workingDels, k)
		}
	}
	return nil
}

// workingKey is t's key in idx_task_discw: discussion id | task id.
func workingKey(t *tasks.Task, id []byte) ([]byte, error) {
	disc, ok := idBytes(t.DiscussionID)
	if !ok {
		return nil, errBadID("discussion", t.DiscussionID)
	}
	return cat(disc, id), nil
}

// apply makes the changes: every removal, then every addition (a key is
// never in both: it holds the task id, and a task whose state and time
// stay is not moved), then the counters.
func (b *indexBatch) apply(tx *bolt.Tx) error {
	for i, ix := range taskIndexes {
		bk := tx.Bucket(ix.bucket)
		slices.SortFunc(b.dels[i], bytes.Compare)
		for _, k := range b.dels[i] {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		slices.SortFunc(b.puts[i], func(x, y [2][]byte) int { return bytes.Compare(x[0], y[0]) })
		for _, kv := range b.puts[i] {
			if err := bk.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	wb := tx.Bucket(bucketTaskDiscWorking)
	slices.SortFunc(b.workingDels, bytes.Compare)
	for _, k := range b.workingDels {
		if err := wb.Delete(k); err != nil {
			return err
		}
	}
	slices.SortFunc(b.workingPuts, func(x, y [2][]byte) int { return bytes.Compare(x[0], y[0]) })
	for _, kv := range b.workingPuts {
		if err := wb.Put(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return b.counts.apply(tx)
}

// indexTask adds (delta=+1) or removes (delta=-1) every index entry of t.
func indexTask(tx *bolt.Tx, t *tasks.Task, delta int64) error {
	return indexTaskAcc(tx, t, delta, nil)
}

// indexTaskAcc is indexTask with the counter changes collected in acc
// (applied at once when acc is nil).
func indexTaskAcc(tx *bolt.Tx, t *tasks.Task, delta int64, acc counterDeltas) error {
	owner, ok := idBytes(t.OwnerID)
	if !ok {
		return errBadID("owner", t.OwnerID)
	}
	id, ok := idBytes(t.ID)
	if !ok {
		return errBadID("task", t.ID)
	}
	counts := tx.Bucket(bucketCounts)
	tail := tsID(t.StatusTime, id)
	for i, ix := range taskIndexes {
		p := ix.prefix(owner, t)
		b := tx.Bucket(ix.bucket)
		k := cat(p, tail)
		var err error
		if delta > 0 {
			err = b.Put(k, indexValue(i, owner, t))
		} else {
			err = b.Delete(k)
		}
		if err != nil {
			return err
		}
		if !ix.counted {
			continue
		}
		if acc != nil {
			acc[string(counterKey(ix.bucket, p))] += delta
		} else if err := counter(counts, counterKey(ix.bucket, p), delta); err != nil {
			return err
		}
	}
	if !inWorking(t) {
		return nil
	}
	k, err := workingKey(t, id)
	if err != nil {
		return err
	}
	if delta > 0 {
		return tx.Bucket(bucketTaskDiscWorking).Put(k, owner)
	}
	return tx.Bucket(bucketTaskDiscWorking).Delete(k)
}

// prefixEnd returns the smallest key greater than every key starting with
// p, or nil when there is none (p empty or all 0xff).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// seekBefore positions c on the greatest key strictly less than k (k nil:
// the last key) and returns it.
func seekBefore(c *bolt.Cursor, k []byte) ([]byte, []byte) {
	if k == nil {
		return c.Last()
	}
	if sk, _ := c.Seek(k); sk == nil {
		return c.Last()
	}
	return c.Prev()
}
