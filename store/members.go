package store

import (
	"bytes"
	"time"

	bolt "go.etcd.io/bbolt"
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

// Per-agent rate windows: the time of a ratelimit.Rate, kept by the store
// with the agent's data, read for the decision and moved on by the write
// it allowed.
const (
	windowAsk   byte = 'a'
	windowReply byte = 'r'
)

// putWindow keeps next as agent's time of the limit of kind: the window
// a decision moved on.
func putWindow(tx *bolt.Tx, kind byte, agent []byte, next time.Time) error {
	return tx.Bucket(bucketRateWindows).Put(cat([]byte{kind}, agent), u64(uint64(next.UnixNano())))
}
