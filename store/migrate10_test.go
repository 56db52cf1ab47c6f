package store

import (
	"context"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/push"
)

// Migration 10 indexes the pending deliveries of a schema 7 file by
// destination: the file passes kfa check, and the sender finds them.
func TestMigrationIndexesDueByDestination(t *testing.T) {
	w := newPushWorld(t)
	ctx := context.Background()
	w.mutate(t, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketPushDest); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, u64(7))
	})
	path := w.db.Path()
	if err := w.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if rep, err := db.Check(ctx); err != nil || !rep.OK() || rep.SchemaVersion != SchemaVersion() {
		t.Fatalf("check after migration: %v\n%s", err, dump(rep))
	}
	err = db.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketPushDest).Stats().KeyN; n != 1 {
			t.Errorf("%d entries by destination, want the one pending delivery's", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now := w.pending.NextAt.Add(time.Second)
	dests, _, err := db.DueDestinations(ctx, push.DueQuery{Now: now, Limit: 10})
	if err != nil || !slices.Equal(dests, []string{w.pending.Destination}) {
		t.Fatalf("due destinations: %q %v", dests, err)
	}
	due, err := db.DueDeliveries(ctx, w.pending.Destination, now, 10)
	if err != nil || len(due) != 1 || due[0].ID != w.pending.ID {
		t.Fatalf("due deliveries: %+v %v", due, err)
	}
}
