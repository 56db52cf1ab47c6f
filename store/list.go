package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/tasks"
)

// ListTasks implements tasks.Store: one cursor seek, then at most
// PageSize+1 steps (with a context filter, the steps over the context's
// entries of other owners or states too). totalSize comes from the index
// counters, except with Since or a context filter (a count of the matching
// range's entries, none of them a task read).
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
		ix taskIndex
		// filter, when set, keeps the context index entries (by value)
		// of the owner and state asked for.
		filter func(v []byte) bool
	)
	switch {
	case q.ContextID != "":
		// The context's tasks, filtered on the entries' owner and state.
		ix = taskIndexes[idxAllCtx]
		want := stateByte(q.State)
		if owner != nil || q.State != "" {
			filter = func(v []byte) bool {
				return len(v) == 17 && (owner == nil || bytes.Equal(v[:16], owner)) && (q.State == "" || v[16] == want)
			}
		}
	case owner != nil && q.State != "":
		ix = taskIndexes[idxOwnerState]
	case owner != nil:
		ix = taskIndexes[idxOwner]
	case q.State != "":
		ix = taskIndexes[idxAllState]
	default:
		ix = taskIndexes[idxAll]
	}
	prefix := ix.prefix(owner, probe)
	since := uint64(q.SinceMillis())
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
		keep := func(v []byte) bool { return filter == nil || filter(v) }

		// totalSize
		switch {
		case ix.counted && since == 0:
			total = readCounter(tx.Bucket(bucketCounts), counterKey(ix.bucket, prefix))
		default:
			n := 0
			for k, v := seekBefore(c, prefixEnd(prefix)); inRange(k); k, v = c.Prev() {
				if keep(v) {
					n++
				}
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
		for k, iv := seekBefore(c, start); inRange(k); k, iv = c.Prev() {
			if !keep(iv) {
				continue
			}
			if n == q.PageSize {
				// One more match exists: the page has a successor.
				next = &tasks.Cursor{StatusTime: fromMS(keyTS(last)), ID: idString(last[len(last)-16:])}
				return nil
			}
			v, err := load(k)
			if err != nil {
				return err
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
