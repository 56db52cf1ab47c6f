package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/tasks"
)

// ListTasks implements tasks.Store: one cursor seek, then at most
// PageSize+1 steps. totalSize comes from the index counters, except with
// Since (a key-only count of the matching range) or a context and a state
// filter without an owner (operator listings: the context's tasks are
// read to filter them by state).
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
	case q.ContextID != "":
		// Every owner's tasks of one context: the context index, and the
		// state (if any) read from each task of the context.
		ix = taskIndexes[idxAllCtx]
		if want := q.State; want != "" {
			postFilter = func(v []byte) (bool, error) {
				snap, err := snapshotOf(v)
				return snap.State == want, err
			}
		}
	case q.State != "":
		ix = taskIndexes[idxAllState]
	default:
		ix = taskIndexes[idxAll]
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
