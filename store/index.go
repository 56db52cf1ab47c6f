package store

import (
	"bytes"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// Task indexes. Every key is prefix | status timestamp (8, big endian ms) |
// task id (16); reading a bucket backwards from the end of a prefix yields
// newest first, ties by id descending, which is the ListTasks order. Each
// index keeps a counter per prefix in the counts bucket (for totalSize).
type taskIndex struct {
	bucket []byte
	prefix func(owner []byte, t *tasks.Task) []byte
}

var taskIndexes = []taskIndex{
	{bucketTaskAll, func(_ []byte, _ *tasks.Task) []byte { return nil }},
	{bucketTaskAllSt, func(_ []byte, t *tasks.Task) []byte { return []byte{stateByte(t.State)} }},
	{bucketTaskByOwner, func(o []byte, _ *tasks.Task) []byte { return o }},
	{bucketTaskByState, func(o []byte, t *tasks.Task) []byte { return cat(o, []byte{stateByte(t.State)}) }},
	{bucketTaskByCtx, func(o []byte, t *tasks.Task) []byte { return cat(o, ctxPart(t.ContextID)) }},
	{bucketTaskByCtxSt, func(o []byte, t *tasks.Task) []byte {
		return cat(o, ctxPart(t.ContextID), []byte{stateByte(t.State)})
	}},
}

// The index buckets, in taskIndexes order.
const (
	idxAll = iota
	idxAllState
	idxOwner
	idxOwnerState
	idxOwnerCtx
	idxOwnerCtxState
)

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

func tsID(t time.Time, id []byte) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, ms(t))
	return append(k, id...)
}

func counterKey(bucket, prefix []byte) []byte {
	return cat(bucket, []byte{0}, prefix)
}

// indexTask adds (delta=+1) or removes (delta=-1) every index entry of t.
func indexTask(tx *bolt.Tx, t *tasks.Task, delta int64) error {
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
	for _, ix := range taskIndexes {
		p := ix.prefix(owner, t)
		b := tx.Bucket(ix.bucket)
		k := cat(p, tail)
		var err error
		if delta > 0 {
			err = b.Put(k, nil)
		} else {
			err = b.Delete(k)
		}
		if err != nil {
			return err
		}
		if err := counter(counts, counterKey(ix.bucket, p), delta); err != nil {
			return err
		}
	}
	return nil
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
