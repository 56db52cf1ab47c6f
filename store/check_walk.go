package store

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"
)

// checker walks the file for CheckWith: each family of invariants is one
// or more walks over a bucket, in read transactions of at most chunk
// entries; whatever an invariant compares is read in the transaction of
// the entry it is about.
type checker struct {
	ctx   context.Context
	rep   *CheckReport
	view  func(func(*bolt.Tx) error) error
	chunk int
	after func() // between two transactions (tests)

	// expected holds what each counter should read, as counted while
	// walking: counter key -> count.
	expected map[string]int
}

func newChecker(ctx context.Context, rep *CheckReport, view func(func(*bolt.Tx) error) error, chunk int) *checker {
	return &checker{ctx: ctx, rep: rep, view: view, chunk: chunk, expected: map[string]int{}}
}

// run checks every family.
func (c *checker) run() error {
	for _, family := range []func() error{
		c.checkAgents, c.checkDiscussions, c.checkTasks, c.checkTaskIndexes, c.checkTaskMaps,
		c.checkInbox, c.checkWindows, c.checkCounters, c.checkPush, c.checkSessions, c.checkModeration,
	} {
		if err := family(); err != nil {
			return err
		}
	}
	return nil
}

// walk calls fn with every entry of bucket in key order, in read
// transactions of at most c.chunk entries; fn may read anything else
// through tx. k and v are valid only during the call. The walk ends at
// the last key the bucket had when it began, so writes cannot keep it
// going; entries written meanwhile may or may not be seen.
func (c *checker) walk(bucket []byte, fn func(tx *bolt.Tx, k, v []byte)) error {
	var last, end []byte
	n := 0
	for {
		more := false
		err := c.view(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucket)
			if b == nil {
				return nil
			}
			cur := b.Cursor()
			if end == nil {
				if end, _ = cur.Last(); end == nil {
					return nil
				}
				end = bytes.Clone(end)
			}
			var k, v []byte
			if last == nil {
				k, v = cur.First()
			} else if k, v = cur.Seek(last); bytes.Equal(k, last) {
				k, v = cur.Next()
			}
			for i := 0; k != nil && bytes.Compare(k, end) <= 0; k, v = cur.Next() {
				if i == c.chunk {
					more = true
					return nil
				}
				fn(tx, k, v)
				last = append(last[:0], k...)
				i++
				n++
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !more {
			break
		}
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if c.after != nil {
			c.after()
		}
	}
	c.rep.examined(bucket, n)
	return nil
}

// prefixed calls fn with every entry of b whose key starts with prefix.
func prefixed(b *bolt.Bucket, prefix []byte, fn func(k, v []byte)) {
	cur := b.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		fn(k, v)
	}
}
