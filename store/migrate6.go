package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Migration 6: one context index instead of three.
//
// Until schema 6 every ask wrote its owner's context listings into two
// indexes of their own (idx_task_ctx, idx_task_ctxst) and three counters
// per context, each on a page of its own: most of what an ask wrote. Now
// idx_task_allctx serves every context listing, its values (owner and
// state) filtering a scan of the context's range.
//
// A file of a million tasks has millions of entries to rewrite, so the
// migration is not one transaction: rewriteContextValues runs first, in
// transactions of migrateChunk entries, and leaves a valid schema-5 file
// behind (schema 5 writes and ignores empty values); then one transaction
// drops the two indexes and sets schema 6; then sweepContextCounters
// deletes the context counters, again in chunks. Every step is
// idempotent: a crash before the schema changes leaves schema 5, and the
// next open starts over; a crash after it leaves counters that nothing
// reads, which every writable open sweeps. It is resumable, not atomic;
// no step holds more than a chunk in memory.

// migrateChunk is how many entries one transaction of migration 6
// rewrites or deletes (a variable for tests).
var migrateChunk = 50_000

// rewriteContextValues gives every context index entry its task's owner
// and state.
func rewriteContextValues(db *bolt.DB) error {
	var after []byte // the last key rewritten
	for {
		done := false
		err := db.Update(func(tx *bolt.Tx) error {
			tuneTx(tx)
			b, tb := tx.Bucket(bucketTaskAllCtx), tx.Bucket(bucketTasks)
			if b == nil || tb == nil {
				done = true
				return nil
			}
			c := b.Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			var puts [][2][]byte
			for n := 0; k != nil && n < migrateChunk; k, v = c.Next() {
				n++
				after = bytes.Clone(k)
				if len(k) < 24 {
					continue // malformed: kfa check reports it
				}
				t, err := headerOf(tb.Get(k[len(k)-16:]))
				if err != nil {
					continue // dangling: kfa check reports it
				}
				owner, ok := idBytes(t.OwnerID)
				if !ok {
					continue
				}
				if want := ctxValue(owner, &t); !bytes.Equal(v, want) {
					puts = append(puts, [2][]byte{after, want})
				}
			}
			done = k == nil
			for _, kv := range puts {
				if err := b.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}

// dropOwnerContextIndexes is migration 6's transaction.
func dropOwnerContextIndexes(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketTaskByCtx, bucketTaskByCtxSt} {
		if tx.Bucket(name) == nil {
			continue
		}
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("delete bucket %s: %w", name, err)
		}
	}
	return nil
}

// retiredCounters are the prefixes of counter families no schema-6 index
// keeps.
var retiredCounters = [][]byte{
	counterKey(bucketTaskByCtx, nil), counterKey(bucketTaskByCtxSt, nil), counterKey(bucketTaskAllCtx, nil),
}

// sweepContextCounters deletes the retired counters, migrateChunk at a
// time. With none left, it is one seek per family.
func sweepContextCounters(db *bolt.DB) error {
	for _, prefix := range retiredCounters {
		var any bool
		err := db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketCounts); b != nil {
				k, _ := b.Cursor().Seek(prefix)
				any = k != nil && bytes.HasPrefix(k, prefix)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for any {
			var n int
			err := db.Update(func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketCounts)
				if b == nil {
					return nil
				}
				var keys [][]byte
				c := b.Cursor()
				for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(keys) < migrateChunk; k, _ = c.Next() {
					keys = append(keys, bytes.Clone(k))
				}
				n = len(keys)
				for _, k := range keys {
					if err := b.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			any = n == migrateChunk
		}
	}
	return nil
}
