package store

import (
	"context"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// Migration 13 answers every discussion of a schema 12 file by its
// earliest visible qualifying reply: one answered at a later reply's time
// (concurrent replies that committed out of order, under the old rule)
// gets the earliest's, and one whose only answer is hidden (which the old
// rule left answered) is open again. The file then passes kfa check, and
// the log tells the followers which discussions moved.
func TestMigrationReanswersDiscussions(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC) }
	text := "a question whose only answer is hidden"
	tk, _, err := tasks.NewService(w.db, tasks.Limits{}, w.db.Secret(), now).Ask(ctx, tasks.AskInput{
		Asker: tasks.Asker{ID: w.alice.ID, Name: w.alice.Name}, Question: text,
		Message: a2a.Message{MessageID: "m-hidden", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}})
	if err != nil {
		t.Fatal(err)
	}
	only, err := discussions.NewService(w.db, discussions.Limits{}, w.db.Secret(), now).
		Reply(ctx, discussions.Author{ID: w.bob.ID, Name: w.bob.Name}, tk.DiscussionID, "spam")
	if err != nil {
		t.Fatal(err)
	}
	var earliest time.Time
	w.mutate(t, func(tx *bolt.Tx) error {
		// The answered discussion: answered at its later answer's time.
		d, _, err := getDiscussion(tx, w.disc)
		if err != nil {
			return err
		}
		earliest = d.AnsweredAt
		d.AnsweredAt = earliest.Add(5 * time.Millisecond)
		if err := putDiscussion(tx, &d, listing(&d)); err != nil {
			return err
		}
		// The other: its only answer hidden, still answered.
		h, _, err := getDiscussion(tx, tk.DiscussionID)
		if err != nil {
			return err
		}
		r := only.Reply
		r.Hidden, r.HiddenAt = true, now()
		h.HiddenReplies = 1
		if err := putDiscussion(tx, &h, listing(&h)); err != nil {
			return err
		}
		dk, _ := idBytes(r.DiscussionID)
		rk, _ := idBytes(r.ID)
		v, err := encodeJSON(&r)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketReplies).Put(cat(dk, rk), v); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, u64(12))
	})
	head, err := w.db.LogState(ctx)
	if err != nil {
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
	if rep, err := db.Check(ctx); err != nil || !rep.OK() || rep.SchemaVersion != SchemaVersion() {
		t.Fatalf("check after migration: %v\n%s", err, dump(rep))
	}
	if d, err := db.GetDiscussion(ctx, w.disc); err != nil || d.Status != discussions.StatusAnswered || !d.AnsweredAt.Equal(earliest) {
		t.Fatalf("the answered discussion: %s at %s (%v), want answered at %s", d.Status, d.AnsweredAt, err, earliest)
	}
	if d, err := db.GetDiscussion(ctx, tk.DiscussionID); err != nil || d.Status != discussions.StatusOpen || !d.AnsweredAt.IsZero() {
		t.Fatalf("the discussion whose only answer is hidden: %s at %s (%v), want open", d.Status, d.AnsweredAt, err)
	}
	evs, err := db.ReadLog(ctx, head.Last, 100)
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{}
	for _, e := range evs {
		if e.Kind == changelog.DiscussionChanged && e.Ref == changelog.RefStatus {
			moved[e.ID] = e.Note
		}
	}
	if len(moved) != 2 || moved[w.disc] != "answered" || moved[tk.DiscussionID] != "open" {
		t.Fatalf("the migration's events: %+v", evs)
	}
}
