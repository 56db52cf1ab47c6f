package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// testSnapshots: the stored wire JSON that ViewSnapshot and ViewSnapshots
// hand out is byte for byte what encoding/json makes of the decoded task
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
		snap, err := getSnapshot(e.store, id)
		if err != nil {
			t.Fatalf("snapshot %s: %v", id, err)
		}
		if string(snap.ID) != full.ID || string(snap.OwnerID) != full.OwnerID || snap.State != full.State || !snap.StatusTime.Equal(full.StatusTime) {
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
	if _, err := getSnapshot(e.store, "01JD0000000000000000000000"); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("missing snapshot: %v", err)
	}
	if _, err := getSnapshot(e.store, "not-a-ulid"); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("malformed snapshot id: %v", err)
	}

	// The listings agree, page by page, for every index and for the
	// operator's context filter (walked and filtered), under every view a
	// reader may ask for (a store may read only what the view shows).
	for _, q := range []tasks.ListQuery{
		{OwnerID: a.ID}, {OwnerID: a.ID, State: a2a.TaskStateWorking}, {OwnerID: a.ID, ContextID: in.Message.ContextID},
		{}, {State: a2a.TaskStateCanceled}, {ContextID: in.Message.ContextID}, {OwnerID: b.ID},
	} {
		for _, v := range append([]*tasks.View{nil}, ptrs(views)...) {
			q.Show, q.After = v, nil
			show := tasks.FullView
			if v != nil {
				show = *v
			}
			listAgrees(t, e.store, q, show)
		}
	}
}

func ptrs[T any](xs []T) []*T {
	out := make([]*T, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

// listAgrees pages through q with ListTasks and ViewSnapshots, one task a
// page, and fails unless they give the same pages, totals and tasks,
// each snapshot shown under show as its task.
func listAgrees(t *testing.T, st Store, q tasks.ListQuery, show tasks.View) {
	t.Helper()
	ctx := context.Background()
	q.PageSize = 1
	for page := 0; ; page++ {
		lt, err := st.ListTasks(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		next, total, err := st.ViewSnapshots(ctx, q, func(s *tasks.Snapshot) error {
			got = append(got, s.Wire.Append(nil, show))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if lt.Total != total || len(lt.Tasks) != len(got) || (lt.Next == nil) != (next == nil) ||
			(lt.Next != nil && (lt.Next.ID != next.ID || !lt.Next.StatusTime.Equal(next.StatusTime))) {
			t.Fatalf("query %+v page %d: ListTasks %+v, ViewSnapshots %d tasks, next %+v, total %d", q, page, lt, len(got), next, total)
		}
		for i := range lt.Tasks {
			want, _ := json.Marshal(lt.Tasks[i].Wire(show))
			if !bytes.Equal(got[i], want) {
				t.Fatalf("query %+v view %+v page %d: snapshot %s differs:\n got %s\nwant %s", q, show, page, lt.Tasks[i].ID, got[i], want)
			}
		}
		if lt.Next == nil {
			return
		}
		q.After = lt.Next
	}
}

// getSnapshot copies the snapshot of a task out of ViewSnapshot.
func getSnapshot(st Store, id string) (tasks.Snapshot, error) {
	var out tasks.Snapshot
	err := st.ViewSnapshot(context.Background(), "", id, func(s *tasks.Snapshot) error {
		out = *s
		out.ID, out.OwnerID = bytes.Clone(s.ID), bytes.Clone(s.OwnerID)
		w := &out.Wire
		w.Head, w.Status, w.Artifacts, w.History, w.Metadata =
			bytes.Clone(w.Head), bytes.Clone(w.Status), bytes.Clone(w.Artifacts), bytes.Clone(w.History), bytes.Clone(w.Metadata)
		return nil
	})
	return out, err
}

// testReadsByOwner: GetTask and ViewSnapshot answer a task to its owner
// (and to the operator, with no owner), and another owner's task exactly
// as a missing one: ErrNotFound, fn never called.
func testReadsByOwner(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk := e.ask(t, a, "m1")
	const missing = "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
	for _, tc := range []struct {
		name, owner, id string
		found           bool
	}{
		{"the owner", a.ID, tk.ID, true},
		{"the operator", "", tk.ID, true},
		{"another owner", b.ID, tk.ID, false},
		{"a missing task", a.ID, missing, false},
		{"an id that is no ULID", a.ID, "not-an-id", false},
	} {
		got, err := e.store.GetTask(ctx, tc.owner, tc.id)
		if tc.found && (err != nil || got.ID != tk.ID || len(got.History) != 1) ||
			!tc.found && !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("GetTask, %s: %+v %v", tc.name, got.ID, err)
		}
		called := false
		err = e.store.ViewSnapshot(ctx, tc.owner, tc.id, func(s *tasks.Snapshot) error {
			called = true
			return nil
		})
		if tc.found != called || tc.found && err != nil || !tc.found && !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("ViewSnapshot, %s: called %v, %v", tc.name, called, err)
		}
	}
}
