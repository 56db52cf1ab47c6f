package store

import (
	"context"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// The operator's context filter reads only the context's tasks: with every
// other task's record unreadable, it still lists the context's.
func TestContextFilterReadsOnlyTheContext(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	// Every task not in ctx-alice becomes unreadable.
	w.mutate(t, func(tx *bolt.Tx) error {
		for _, tk := range []tasks.Task{w.joined, w.canceled} {
			k, _ := idBytes(tk.ID)
			if err := tx.Bucket(bucketTasks).Put(k, []byte{taskFormatBinary, 0xff}); err != nil {
				return err
			}
		}
		return nil
	})
	for _, tc := range []struct {
		state a2a.TaskState
		want  []string
	}{
		{"", []string{w.completed.ID, w.waiting.ID}},
		{a2a.TaskStateWorking, []string{w.waiting.ID}},
	} {
		page, err := w.db.ListTasks(ctx, tasks.ListQuery{ContextID: "ctx-alice", State: tc.state, PageSize: 10})
		if err != nil {
			t.Fatalf("state %q: %v", tc.state, err)
		}
		var got []string
		for _, tk := range page.Tasks {
			got = append(got, tk.ID)
		}
		if len(got) != len(tc.want) || page.Total != len(tc.want) {
			t.Fatalf("state %q: %v (total %d), want %v", tc.state, got, page.Total, tc.want)
		}
		for _, id := range tc.want {
			found := false
			for _, g := range got {
				found = found || g == id
			}
			if !found {
				t.Fatalf("state %q: %v lacks %s", tc.state, got, id)
			}
		}
	}
}

// Since schema 6 the context filter decides owner and state from the
// index values: a listing reads only the tasks it returns, so an
// unreadable task it filters out costs nothing.
func TestContextFilterReadsOnlyWhatItLists(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.mutate(t, func(tx *bolt.Tx) error {
		k, _ := idBytes(w.completed.ID) // alice's, in ctx-alice, COMPLETED
		return tx.Bucket(bucketTasks).Put(k, []byte{taskFormatBinary, 0xff})
	})
	for _, q := range []tasks.ListQuery{
		{ContextID: "ctx-alice", State: a2a.TaskStateWorking, PageSize: 10},
		{ContextID: "ctx-alice", OwnerID: w.alice.ID, State: a2a.TaskStateWorking, PageSize: 10},
	} {
		page, err := w.db.ListTasks(ctx, q)
		if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != w.waiting.ID || page.Total != 1 || page.Next != nil {
			t.Fatalf("%+v: %+v %v", q, page, err)
		}
	}
	if _, err := w.db.ListTasks(ctx, tasks.ListQuery{ContextID: "ctx-alice", OwnerID: w.alice.ID, PageSize: 10}); err == nil {
		t.Fatal("a listing of the unreadable task read it without an error")
	}
}
