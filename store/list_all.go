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

// The operator's listings across owners. No index holds every owner's
// tasks: an index that every ask and every transition wrote for the
// operator alone would cost every agent's writes (issue 32). Instead a
// page merges the owners' own ranges, newest first: the owners are the
// counters of the owner index (one per owner with tasks; per owner and
// state for a state filter), each owner's range gets a cursor at the
// page's start, and a heap hands out the newest entry of them all until
// the page is full. A page costs a seek per owner and a heap step per
// task; the total is the sum of the owners' counters (or, with Since,
// a count of their ranges, as for one owner).

// ownerRange is one owner's range of an index during a merge: its cursor
// and the key it is on.
type ownerRange struct {
	c      *bolt.Cursor
	prefix []byte
	k      []byte
}

// tail is the status timestamp and task id of r's key: the merge order.
func (r *ownerRange) tail() []byte { return r.k[len(r.k)-24:] }

// rangeHeap is a max-heap of owner ranges by their keys' tails: the
// newest status timestamp first, ties by id descending, the ListTasks
// order.
type rangeHeap []*ownerRange

func (h rangeHeap) Len() int           { return len(h) }
func (h rangeHeap) Less(i, j int) bool { return bytes.Compare(h[i].tail(), h[j].tail()) > 0 }
func (h rangeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rangeHeap) Push(x any)        { *h = append(*h, x.(*ownerRange)) }
func (h *rangeHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// forEachOwnerCounter calls fn with the prefix (owner, or owner | state)
// and the count of every counter of index ix, in key order; with state
// set, only those of that state.
func forEachOwnerCounter(tx *bolt.Tx, ix taskIndex, state a2a.TaskState, fn func(prefix []byte, n int) error) error {
	family := counterKey(ix.bucket, nil)
	want := stateByte(state)
	c := tx.Bucket(bucketCounts).Cursor()
	for k, v := c.Seek(family); k != nil && bytes.HasPrefix(k, family); k, v = c.Next() {
		prefix := k[len(family):]
		switch {
		case state == "" && len(prefix) != 16, state != "" && (len(prefix) != 17 || prefix[16] != want):
			continue // another state's, or malformed (kfa check reports it)
		case len(v) != 8:
			continue
		}
		if err := fn(prefix, int(binary.BigEndian.Uint64(v))); err != nil {
			return err
		}
	}
	return nil
}

// listAcrossOwners walks one page of q over every owner (q.OwnerID and
// q.ContextID empty), calling emit with each task record in order. It
// returns the cursor of the next page and totalSize, as listTasks does.
func (s *DB) listAcrossOwners(q tasks.ListQuery, emit func(v []byte) error) (next *tasks.Cursor, total int, err error) {
	ix := taskIndexes[idxOwner]
	if q.State != "" {
		ix = taskIndexes[idxOwnerState]
	}
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
		b, tb := tx.Bucket(ix.bucket), tx.Bucket(bucketTasks)
		keyTS := func(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-24 : len(k)-16]) }
		inRange := func(prefix, k []byte) bool {
			return k != nil && len(k) == len(prefix)+24 && bytes.HasPrefix(k, prefix) && keyTS(k) >= since
		}
		var h rangeHeap
		err := forEachOwnerCounter(tx, ix, q.State, func(prefix []byte, n int) error {
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
				h = append(h, &ownerRange{c: c, prefix: prefix, k: k})
			}
			return nil
		})
		if err != nil {
			return err
		}
		heap.Init(&h)
		var last []byte
		for n := 0; h.Len() > 0; n++ {
			r := h[0]
			if n == q.PageSize {
				// One more match exists: the page has a successor.
				next = &tasks.Cursor{StatusTime: fromMS(keyTS(last)), ID: idString(last[len(last)-16:])}
				return nil
			}
			v := tb.Get(r.k[len(r.k)-16:])
			if v == nil {
				return fmt.Errorf("store: index %s points at missing task %s", ix.bucket, idString(r.k[len(r.k)-16:]))
			}
			if err := emit(v); err != nil {
				return err
			}
			last = r.k
			if r.k, _ = r.c.Prev(); inRange(r.prefix, r.k) {
				heap.Fix(&h, 0)
			} else {
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
