package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// A check reads in many short transactions and leaves the writer alone:
// writes commit between its chunks, and none of them is taken for damage.
func TestCheckInChunksWhileWriting(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	tk := tasks.NewService(w.db, tasks.Limits{}, w.db.Secret(), (&fakeClock{t: w.waiting.CreatedAt.Add(1e12)}).now)
	ds := discussions.NewService(w.db, discussions.Limits{}, w.db.Secret(), (&fakeClock{t: w.waiting.CreatedAt.Add(2e12)}).now)
	txBefore := w.db.db.Stats().TxN
	chunks := 0
	rep, err := w.db.CheckWith(ctx, CheckOptions{Chunk: 1, afterChunk: func() {
		// Between two read transactions of the check: an ask, and a
		// qualifying reply or a cancel, each of which moves index entries,
		// counters, members and working tasks.
		chunks++
		if chunks > 60 {
			return
		}
		text := fmt.Sprint("q during check ", chunks)
		in := tasks.AskInput{Asker: tasks.Asker{ID: w.bob.ID, Name: "bob"}, Question: text,
			Message: a2a.Message{MessageID: fmt.Sprint("during-", chunks), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}
		task, _, err := tk.Ask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		switch chunks % 3 {
		case 0:
			if _, err := ds.Reply(ctx, discussions.Author{ID: w.carol.ID, Name: "carol"}, task.DiscussionID, "answer"); err != nil {
				t.Fatal(err)
			}
		case 1:
			if _, _, err := tk.Cancel(ctx, w.bob.ID, task.ID); err != nil {
				t.Fatal(err)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if chunks < 20 {
		t.Fatalf("only %d chunks: the check did not read in chunks", chunks)
	}
	if !rep.OK() {
		t.Fatalf("writes during the check were reported as damage:\n%s", dump(rep))
	}
	if n := w.db.db.Stats().TxN - txBefore; n < chunks {
		t.Fatalf("%d read transactions for %d chunks", n, chunks)
	}
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "page check was not run") {
		t.Fatalf("notes: %q", rep.Notes)
	}
	// And the store those writes left is sound.
	if rep := w.check(t); !rep.OK() {
		t.Fatalf("after the writes:\n%s", dump(rep))
	}
}

// The corruption cases are found in chunks of one entry as in one piece.
func TestCheckFindsCorruptionInChunks(t *testing.T) {
	w := newWorld(t)
	o, _ := idBytes(w.waiting.OwnerID)
	w.mutate(t, func(tx *bolt.Tx) error { return tx.Bucket(bucketTaskByOwner).Delete(ownerKey(w.waiting)) })
	rep, err := w.db.CheckWith(context.Background(), CheckOptions{Chunk: 1})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, v := range rep.Violations {
		kinds = append(kinds, v.Kind)
	}
	if len(rep.Violations) != 2 || kinds[0] != VIndexMissing || kinds[1] != VCounter || !strings.Contains(rep.Violations[1].Key, idString(o)) {
		t.Fatalf("violations:\n%s", dump(rep))
	}
}
