package store

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/tasks"
)

// downgradeTo5 rewrites a current file the way schema 5 laid it out: each
// owner's tasks by context, and by context and state, in indexes of their
// own, a counter per context in each of the three context families, and
// no values in the context index. It works migrateChunk tasks per
// transaction, so that it can build a large file too.
func downgradeTo5(db *bolt.DB) error {
	err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketTaskByCtx, bucketTaskByCtxSt} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var after []byte
	for done := false; !done; {
		err := db.Update(func(tx *bolt.Tx) error {
			tuneTx(tx)
			for _, b := range [][]byte{bucketTaskByCtx, bucketTaskByCtxSt} {
				tx.Bucket(b).FillPercent = appendFill
			}
			c := tx.Bucket(bucketTasks).Cursor()
			k, v := c.First()
			if after != nil {
				c.Seek(after)
				k, v = c.Next()
			}
			acc := counterDeltas{}
			var puts [3][][2][]byte
			for n := 0; k != nil && n < migrateChunk; k, v = c.Next() {
				n++
				after = bytes.Clone(k)
				t, err := headerOf(v)
				if err != nil {
					return err
				}
				owner, _ := idBytes(t.OwnerID)
				tail := tsID(t.StatusTime, k)
				ctx, st := ctxPart(t.ContextID), []byte{stateByte(t.State)}
				for i, p := range [][]byte{cat(owner, ctx), cat(owner, ctx, st), ctx} {
					b := [][]byte{bucketTaskByCtx, bucketTaskByCtxSt, bucketTaskAllCtx}[i]
					puts[i] = append(puts[i], [2][]byte{cat(p, tail), nil})
					acc[string(counterKey(b, p))]++
				}
			}
			done = k == nil
			for i, b := range [][]byte{bucketTaskByCtx, bucketTaskByCtxSt, bucketTaskAllCtx} {
				for _, kv := range puts[i] {
					if err := tx.Bucket(b).Put(kv[0], kv[1]); err != nil {
						return err
					}
				}
			}
			return acc.apply(tx)
		})
		if err != nil {
			return err
		}
	}
	return db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaSchema, u64(5)) })
}

// listings is every listing of the world's owners, contexts and states,
// each walked a page of one task at a time: the task ids, the totals and
// the cursors.
func listings(t *testing.T, db *DB, owners, contexts []string) []string {
	t.Helper()
	var out []string
	for _, o := range owners {
		for _, cx := range contexts {
			for _, st := range []a2a.TaskState{"", a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateCanceled} {
				q := tasks.ListQuery{OwnerID: o, ContextID: cx, State: st, PageSize: 1}
				line := fmt.Sprintf("%s|%s|%s:", o, cx, st)
				for {
					page, err := db.ListTasks(context.Background(), q)
					if err != nil {
						t.Fatal(err)
					}
					for _, tk := range page.Tasks {
						line += " " + tk.ID
					}
					line += fmt.Sprintf(" (%d)", page.Total)
					if page.Next == nil {
						break
					}
					q.After = page.Next
				}
				out = append(out, line)
			}
		}
	}
	return out
}

// Migration 6 leaves one context index with owner and state values, no
// owner context indexes and no context counters, every listing as it was,
// and a file kfa check passes; from a fresh schema-5 file, and after a
// crash at each of its steps.
func TestMigration6OneContextIndex(t *testing.T) {
	defer func(n int) { migrateChunk = n }(migrateChunk)
	migrateChunk = 2 // every step in many transactions
	for _, tc := range []struct {
		name  string
		crash func(db *bolt.DB) error // what ran before the crash
	}{
		{"fresh", func(*bolt.DB) error { return nil }},
		{"crash after rewriting values", rewriteContextValues},
		{"crash after the schema changed", func(db *bolt.DB) error {
			if err := rewriteContextValues(db); err != nil {
				return err
			}
			return db.Update(func(tx *bolt.Tx) error {
				if err := dropOwnerContextIndexes(tx); err != nil {
					return err
				}
				return tx.Bucket(bucketMeta).Put(metaSchema, u64(6))
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			// Two owners in one context, and a context of its own.
			for i, a := range []agents.Agent{w.bob, w.bob, w.carol} {
				text := "q"
				in := tasks.AskInput{Asker: tasks.Asker{ID: a.ID, Name: a.Name}, Question: text,
					Message: a2a.Message{MessageID: fmt.Sprint("m6-", i), ContextID: []string{"ctx-alice", "ctx-alice", ""}[i],
						Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}
				if _, err := w.db.CreateAsk(ctx, tasks.NewAsk(in, w.waiting.CreatedAt.Add(time.Duration(i+1)*time.Second), 0)); err != nil {
					t.Fatal(err)
				}
			}
			owners := []string{"", w.alice.ID, w.bob.ID, w.carol.ID}
			contexts := []string{"", "ctx-alice", "ctx-bob", "ctx-carol", "ctx-nobody"}
			want := listings(t, w.db, owners, contexts)

			if err := downgradeTo5(w.db.db); err != nil {
				t.Fatal(err)
			}
			if err := tc.crash(w.db.db); err != nil {
				t.Fatal(err)
			}
			path := w.db.Path()
			if err := w.db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, Options{BatchDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.db.View(func(tx *bolt.Tx) error {
				for _, b := range [][]byte{bucketTaskByCtx, bucketTaskByCtxSt} {
					if tx.Bucket(b) != nil {
						t.Errorf("%s is still there", b)
					}
				}
				for _, p := range retiredCounters {
					if k, _ := tx.Bucket(bucketCounts).Cursor().Seek(p); bytes.HasPrefix(k, p) {
						t.Errorf("counter %q is still there", k)
					}
				}
				return tx.Bucket(bucketTaskAllCtx).ForEach(func(k, v []byte) error {
					if len(v) != 17 {
						t.Errorf("context entry %x has value %x", k, v)
					}
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep, err := db.Check(ctx); err != nil || !rep.OK() || rep.SchemaVersion != SchemaVersion() {
				t.Fatalf("check after migration: %v\n%s", err, dump(rep))
			}
			if got := listings(t, db, owners, contexts); !reflect.DeepEqual(got, want) {
				t.Fatalf("listings changed:\n got %q\nwant %q", got, want)
			}
		})
	}
}
