package store

import (
	"bytes"
	"context"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
)

// downgradeTo2 rewrites a current file the way schema 2 laid it out: every
// task under its discussion in idx_task_disc, and none of the buckets of
// migration 3.
func downgradeTo2(tx *bolt.Tx) error {
	old, err := tx.CreateBucket(bucketTaskByDisc)
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketDiscMembers).ForEach(func(k, v []byte) error {
		for i := 0; i < len(v); i += 16 {
			if err := old.Put(cat(k[:16], v[i:i+16]), bytes.Clone(k[16:])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, b := range [][]byte{bucketDiscMembers, bucketTaskDiscWorking, bucketRateWindows, bucketTaskAllCtx} {
		if err := tx.DeleteBucket(b); err != nil {
			return err
		}
	}
	var ctxCounters [][]byte
	prefixed(tx.Bucket(bucketCounts), counterKey(bucketTaskAllCtx, nil), func(k, _ []byte) { ctxCounters = append(ctxCounters, bytes.Clone(k)) })
	for _, k := range ctxCounters {
		if err := tx.Bucket(bucketCounts).Delete(k); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(metaSchema, u64(2))
}

// Migration 3 turns idx_task_disc into the members and working tasks and
// indexes tasks by context: the file passes kfa check, and a reply
// completes the waiting task it should.
func TestMigrationSplitsTaskDisc(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.mutate(t, downgradeTo2)
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
		if tx.Bucket(bucketTaskByDisc) != nil {
			t.Error("idx_task_disc is still there")
		}
		if n := tx.Bucket(bucketTaskDiscWorking).Stats().KeyN; n != 1 {
			t.Errorf("%d working tasks, want 1 (alice's waiting one)", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := db.Check(ctx); err != nil || !rep.OK() || rep.SchemaVersion != SchemaVersion() {
		t.Fatalf("check after migration: %v\n%s", err, dump(rep))
	}
	ds := discussions.NewService(db, discussions.Limits{}, db.Secret(), (&fakeClock{t: w.waiting.CreatedAt.Add(time.Hour)}).now)
	res, err := ds.Reply(ctx, discussions.Author{ID: w.bob.ID, Name: "bob"}, w.waiting.DiscussionID, "answer")
	if err != nil || len(res.CompletedTaskIDs) != 1 || res.CompletedTaskIDs[0] != w.waiting.ID {
		t.Fatalf("reply after migration: %+v %v", res, err)
	}
	if tk, err := db.GetTask(ctx, "", w.waiting.ID); err != nil || tk.State != a2a.TaskStateCompleted {
		t.Fatalf("waiting task is %s (%v)", tk.State, err)
	}
	if rep, err := db.Check(ctx); err != nil || !rep.OK() {
		t.Fatalf("check after a reply: %v\n%s", err, dump(rep))
	}
}
