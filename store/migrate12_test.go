package store

import (
	"context"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/moderation"
)

// Migration 12 indexes a schema 11 file's replies by id and every
// discussion and reply by its author: the file passes kfa check, and a
// moderator can hide a reply by its id and everything an agent wrote.
func TestMigrationIndexesPosts(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.mutate(t, func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketReplyDiscs, bucketAuthorPosts, bucketModItems, bucketModFlags, bucketModQueue, bucketModLog} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, u64(11))
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
	posts, _, err := db.PostsBy(ctx, w.alice.ID, "", 100)
	if err != nil || len(posts) == 0 {
		t.Fatalf("alice's posts: %+v %v", posts, err)
	}
	bobs, _, err := db.PostsBy(ctx, w.bob.ID, "", 100)
	if err != nil || len(bobs) == 0 {
		t.Fatalf("bob's posts: %+v %v", bobs, err)
	}
	var reply moderation.Target
	for _, p := range append(posts, bobs...) {
		if p.Kind == moderation.KindReply {
			reply = p
		}
	}
	if reply.ID == "" {
		t.Fatalf("no reply among the posts: %+v %+v", posts, bobs)
	}
	m := moderation.NewService(db, moderation.Policy{}, time.Now)
	res, err := m.Hide(ctx, moderation.Actor{Kind: moderation.ActorOperator}, moderation.Target{ID: reply.ID}, "test")
	if err != nil || !res.Changed || res.DiscussionID != reply.DiscussionID {
		t.Fatalf("hide a reply by its id: %+v %v", res, err)
	}
	if rep, err := db.Check(ctx); err != nil || !rep.OK() {
		t.Fatalf("check after the hide: %v\n%s", err, dump(rep))
	}
}
