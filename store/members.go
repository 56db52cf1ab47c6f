package store

import (
	"bytes"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/ratelimit"
)

// Who is on a discussion. A reply needs two things of its discussion: the
// agents to notify (everyone with a task on it, whatever the task's state)
// and the tasks to complete (the WORKING ones). disc_members holds the
// first, one entry per agent with its task ids; idx_task_discw the second,
// kept by the task index code (index.go) as tasks enter and leave
// WORKING. Neither grows with the tasks a reply has nothing to do with.

// addMember records task id of owner on discussion disc, keeping the
// owner's ids in ascending order.
func addMember(tx *bolt.Tx, disc, owner, id []byte) error {
	b := tx.Bucket(bucketDiscMembers)
	k := cat(disc, owner)
	old := b.Get(k)
	at := len(old)
	for i := 0; i+16 <= len(old); i += 16 {
		c := bytes.Compare(old[i:i+16], id)
		if c == 0 {
			return nil
		}
		if c > 0 {
			at = i
			break
		}
	}
	v := make([]byte, 0, len(old)+16)
	v = append(append(append(v, old[:at]...), id...), old[at:]...)
	return b.Put(k, v)
}

// memberTasks splits a disc_members value into task ids.
func memberTasks(v []byte) []string {
	out := make([]string, 0, len(v)/16)
	for i := 0; i+16 <= len(v); i += 16 {
		out = append(out, idString(v[i:i+16]))
	}
	return out
}

// Per-agent rate windows: the time of a ratelimit.Rate, kept by the store
// with the agent's data and moved on by the write it allowed.
const (
	windowAsk   byte = 'a'
	windowReply byte = 'r'
)

// window is one agent's window of one limit, read in a write transaction.
type window struct {
	key  []byte
	next time.Time // what to store once the write is allowed
}

// takeWindow applies rate to agent's window of kind at now. Allowed, it
// returns the window to store with the write (putWindow); refused, a
// refusal with the wait. A disabled rate allows and stores nothing.
func takeWindow(tx *bolt.Tx, kind byte, agent []byte, rate ratelimit.Rate, now time.Time) (*window, error) {
	if !rate.Enabled() {
		return nil, nil
	}
	k := cat([]byte{kind}, agent)
	tat := readWindow(tx, kind, agent)
	next, wait, ok := rate.Take(tat, now)
	if !ok {
		return nil, refuse(&ratelimit.Exceeded{RetryAfter: wait})
	}
	return &window{key: k, next: next}, nil
}

// putWindow stores a window takeWindow allowed (nothing for nil).
func putWindow(tx *bolt.Tx, w *window) error {
	if w == nil {
		return nil
	}
	return tx.Bucket(bucketRateWindows).Put(w.key, u64(uint64(w.next.UnixNano())))
}
