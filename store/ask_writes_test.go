package store

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// fileKeys is every key of every bucket with its value (nested buckets
// are not used by the store).
func fileKeys(t *testing.T, db *DB) map[string]map[string][]byte {
	t.Helper()
	out := map[string]map[string][]byte{}
	err := db.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			m := map[string][]byte{}
			out[string(name)] = m
			return b.ForEach(func(k, v []byte) error {
				m[string(k)] = bytes.Clone(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAskWritesWhatAgentsRead: a new ask writes the keys an agent's read
// or a limit needs, and nothing for the operator alone, each named here
// with what needs it. A key added to the ask's writes fails this test
// until it is named with its reader.
func TestAskWritesWhatAgentsRead(t *testing.T) {
	w := newWorld(t)
	before := fileKeys(t, w.db)
	tk := tasks.NewService(w.db, tasks.Limits{}, w.db.Secret(), (&fakeClock{t: w.waiting.CreatedAt.Add(time.Hour)}).now)
	text := "one more question"
	if _, _, err := tk.Ask(context.Background(), tasks.AskInput{Asker: tasks.Asker{ID: w.alice.ID, Name: w.alice.Name}, Question: text,
		Message: a2a.Message{MessageID: "m-writes", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}); err != nil {
		t.Fatal(err)
	}
	after := fileKeys(t, w.db)
	written := map[string]int{}
	for name, keys := range after {
		for k, v := range keys {
			if old, ok := before[name][k]; !ok || !bytes.Equal(old, v) {
				written[name]++
			}
		}
		for k := range before[name] {
			if _, ok := keys[k]; !ok {
				written[name]++
			}
		}
	}
	want := map[string]int{
		"tasks":           1, // GetTask, ListTasks
		"task_msgids":     1, // a retried ask is answered with its task
		"idx_task_state":  1, // the owner's ListTasks (its state ranges merged), and by state
		"idx_task_allctx": 1, // ListTasks by context
		"idx_task_discw":  1, // what a reply completes
		"disc_members":    1, // who a reply notifies
		"discussions":     1, // GetDiscussion, ListDiscussions
		"idx_disc_status": 1, // ListDiscussions by status
		// the owner's WORKING count (the open-task bound, its totalSize by
		// state and, summed with its other states', without); the totalSize
		// of ListDiscussions, of all and of the open ones
		"counts": 3,
		"log":    2, // task.created, discussion.opened: the followers
	}
	if !maps.Equal(written, want) {
		names := slices.Sorted(maps.Keys(written))
		t.Fatalf("an ask wrote %v (buckets %v), want %v", written, names, want)
	}
}
