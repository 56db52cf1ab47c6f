package store

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// Listings that merge ranges of idx_task_state (owner | state | ts | id).
// Since schema 13 it is the one time-ordered task index with an owner in
// its keys: an index that every ask and every transition wrote for a
// listing the others can make would cost every agent's writes (issue 32).
//
//   - An owner's listing without a state filter merges the owner's
//     ranges, one per state it has tasks in (a few: WORKING, COMPLETED,
//     CANCELED); until schema 13 idx_task_owner held it.
//   - The operator's listings across owners merge every owner's range of
//     the state asked for, or every owner's ranges; until schema 13
//     idx_task_all and idx_task_allst held them.
//
// The ranges are the counters of idx_task_state (one per owner and state
// with tasks), each gets a cursor at the page's start, and a heap hands
// out the newest entry of them all until the page is full: a page costs a
// seek per range and a heap step per task. The total is the sum of the
// ranges' counters, or (with Since) a count of their keys, as for one
// range.

// taskRange is one range of idx_task_state during a merge: its cursor and
// the key it is on.
type taskRange struct {
	c      *bolt.Cursor
	prefix []byte
	k      []byte
}

// tail is the status timestamp and task id of r's key: the merge order.
func (r *taskRange) tail() []byte { return r.k[len(r.k)-24:] }

// rangeHeap is a max-heap of ranges by their keys' tails: the newest
// status timestamp first, ties by id descending, the ListTasks order.
type rangeHeap []*taskRange

func (h rangeHeap) Len() int           { return len(h) }
func (h rangeHeap) Less(i, j int) bool { return bytes.Compare(h[i].tail(), h[j].tail()) > 0 }
func (h rangeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rangeHeap) Push(x any)        { *h = append(*h, x.(*taskRange)) }
func (h *rangeHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// smallMerge is the most ranges a merge picks from by comparing them all.
const smallMerge = 8

// forEachStateCounter calls fn with the prefix (owner | state) and the
// count of every counter of idx_task_state, in key order: of owner only
// when owner is not nil, of state only when state is not "".
func forEachStateCounter(tx *bolt.Tx, owner []byte, state a2a.TaskState, fn func(prefix []byte, n int) error) error {
	family := counterKey(bucketTaskByState, owner)
	want := stateByte(state)
	c := tx.Bucket(bucketCounts).Cursor()
	start := len(counterKey(bucketTaskByState, nil))
	for k, v := c.Seek(family); k != nil && bytes.HasPrefix(k, family); k, v = c.Next() {
		prefix := k[start:]
		if len(prefix) != 17 || len(v) != 8 || state != "" && prefix[16] != want {
			continue // another state's, or malformed (kfa check reports it)
		}
		if err := fn(prefix, int(binary.BigEndian.Uint64(v))); err != nil {
			return err
		}
	}
	return nil
}

// listMerged walks one page of q (no context; an owner's without a state,
// or every owner's), calling emit with each task record in order. It
// returns the cursor of the next page and totalSize, as listTasks does.
func (s *DB) listMerged(q tasks.ListQuery, owner []byte, emit func(v []byte) error) (next *tasks.Cursor, total int, err error) {
	var after []byte // the cursor's timestamp | id
	if q.After != nil {
		id, ok := idBytes(q.After.ID)
		if !ok {
			return nil, 0, errors.New("store: bad cursor id")
		}
		after = tsID(q.After.StatusTime, id)
	}
	since := uint64(q.SinceMillis())
	err = s.db.View(func(tx *bolt.Tx) error {
		b, tb := tx.Bucket(bucketTaskByState), tx.Bucket(bucketTasks)
		keyTS := func(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-24 : len(k)-16]) }
		inRange := func(prefix, k []byte) bool {
			return k != nil && len(k) == len(prefix)+24 && bytes.HasPrefix(k, prefix) && keyTS(k) >= since
		}
		var h rangeHeap
		err := forEachStateCounter(tx, owner, q.State, func(prefix []byte, n int) error {
			c := b.Cursor()
			if since == 0 {
				total += n
			} else {
				for k, _ := seekBefore(c, prefixEnd(prefix)); inRange(prefix, k); k, _ = c.Prev() {
					total++
				}
			}
			start := prefixEnd(prefix)
			if after != nil {
				start = cat(prefix, after)
			}
			if k, _ := seekBefore(c, start); inRange(prefix, k) {
				h = append(h, &taskRange{c: c, prefix: prefix, k: k})
			}
			return nil
		})
		if err != nil {
			return err
		}
		// An owner's listing merges a few ranges: picking the newest of
		// them is cheaper than a heap's steps. The operator's merges many.
		small := len(h) <= smallMerge
		if !small {
			heap.Init(&h)
		}
		var last []byte
		for n := 0; h.Len() > 0; n++ {
			top := 0
			if small {
				for i := 1; i < len(h); i++ {
					if h.Less(i, top) {
						top = i
					}
				}
			}
			r := h[top]
			if n == q.PageSize {
				// One more match exists: the page has a successor.
				next = &tasks.Cursor{StatusTime: fromMS(keyTS(last)), ID: idString(last[len(last)-16:])}
				return nil
			}
			v := tb.Get(r.k[len(r.k)-16:])
			if v == nil {
				return fmt.Errorf("store: index %s points at missing task %s", bucketTaskByState, idString(r.k[len(r.k)-16:]))
			}
			if err := emit(v); err != nil {
				return err
			}
			last = r.k
			r.k, _ = r.c.Prev()
			switch {
			case inRange(r.prefix, r.k) && !small:
				heap.Fix(&h, 0)
			case inRange(r.prefix, r.k):
			case small:
				h[top] = h[len(h)-1]
				h = h[:len(h)-1]
			default:
				heap.Pop(&h)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return next, total, nil
}
