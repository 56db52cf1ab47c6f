package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// testSnapshots: the stored wire JSON that GetSnapshot and ListSnapshots
// return is byte for byte what encoding/json makes of the decoded task
// under every view, in every state, and the snapshot listings page exactly
// like ListTasks.
func testSnapshots(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob <&>")

	in := askInput(a, "m1", "how do I <escape> \"this\" & that?")
	in.Message.ContextID = "ctx<&>\"é"
	in.Message.Metadata = json.RawMessage(`{"k": [1, {"x": "<y>"}]}`)
	working, _, err := e.tk.Ask(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(1e6)
	completed := e.ask(t, a, "m2")
	e.reply(t, b, completed.DiscussionID, "use <b>this</b> & \"that\"")
	e.clock.Advance(1e6)
	canceled := e.ask(t, a, "m3")
	if _, _, err := e.tk.Cancel(ctx, a.ID, canceled.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(1e6)
	joined := e.join(t, b, "m4", working.DiscussionID)

	n := func(i int) *int { return &i }
	views := []tasks.View{tasks.FullView, {}, {HistoryLength: n(0)}, {HistoryLength: n(1), IncludeArtifacts: true}, {HistoryLength: n(5)}}
	for _, id := range []string{working.ID, completed.ID, canceled.ID, joined.ID} {
		full := e.task(t, id)
		snap, err := e.store.GetSnapshot(ctx, id)
		if err != nil {
			t.Fatalf("snapshot %s: %v", id, err)
		}
		if snap.ID != full.ID || snap.OwnerID != full.OwnerID || snap.State != full.State || !snap.StatusTime.Equal(full.StatusTime) {
			t.Fatalf("snapshot %s fields %+v, task %+v", id, snap, full)
		}
		for _, v := range views {
			want, err := json.Marshal(full.Wire(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := snap.Wire.Append(nil, v); !bytes.Equal(got, want) {
				t.Errorf("task %s (%s), view %+v:\n got %s\nwant %s", id, full.State, v, got, want)
			}
		}
	}
	if _, err := e.store.GetSnapshot(ctx, "01JD0000000000000000000000"); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("missing snapshot: %v", err)
	}
	if _, err := e.store.GetSnapshot(ctx, "not-a-ulid"); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("malformed snapshot id: %v", err)
	}

	// The listings agree, page by page, for every index and for the
	// operator's context filter (walked and filtered).
	for _, q := range []tasks.ListQuery{
		{OwnerID: a.ID}, {OwnerID: a.ID, State: a2a.TaskStateWorking}, {OwnerID: a.ID, ContextID: in.Message.ContextID},
		{}, {State: a2a.TaskStateCanceled}, {ContextID: in.Message.ContextID}, {OwnerID: b.ID},
	} {
		q.PageSize = 1
		for page := 0; ; page++ {
			lt, err := e.store.ListTasks(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			ls, err := e.store.ListSnapshots(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if lt.Total != ls.Total || len(lt.Tasks) != len(ls.Tasks) || (lt.Next == nil) != (ls.Next == nil) ||
				(lt.Next != nil && (lt.Next.ID != ls.Next.ID || !lt.Next.StatusTime.Equal(ls.Next.StatusTime))) {
				t.Fatalf("query %+v page %d: ListTasks %+v, ListSnapshots %+v", q, page, lt, ls)
			}
			for i := range lt.Tasks {
				want, _ := json.Marshal(lt.Tasks[i].Wire(tasks.View{}))
				if got := ls.Tasks[i].Wire.Append(nil, tasks.View{}); !bytes.Equal(got, want) {
					t.Fatalf("query %+v page %d: snapshot %s differs:\n got %s\nwant %s", q, page, lt.Tasks[i].ID, got, want)
				}
			}
			if lt.Next == nil {
				break
			}
			q.After = lt.Next
		}
	}
}
