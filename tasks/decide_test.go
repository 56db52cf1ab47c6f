package tasks

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
)

func TestDecideCancel(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	header := func(state a2a.TaskState) *Task {
		w := working()
		w.History = nil
		w.State = state
		return &w
	}
	configs := []push.Config{{ID: "c1", URL: "https://a.example.com/hook"}, {ID: "c2", URL: "https://b.example.com:8443/x"}}
	for _, tc := range []struct {
		name        string
		st          CancelState
		owner       string
		wantErr     error
		wantChanged bool
		wantEvents  []changelog.Kind
	}{
		{"unknown task", CancelState{}, "alice", ErrNotFound, false, nil},
		{"another agent's task is not found", CancelState{Task: header(a2a.TaskStateWorking)}, "bob", ErrNotFound, false, nil},
		{"owner cancels", CancelState{Task: header(a2a.TaskStateWorking)}, "alice", nil, true, []changelog.Kind{changelog.TaskMoved}},
		{"operator cancels anyone's", CancelState{Task: header(a2a.TaskStateWorking)}, "", nil, true, []changelog.Kind{changelog.TaskMoved}},
		{"canceled again changes nothing", CancelState{Task: header(a2a.TaskStateCanceled)}, "alice", nil, false, nil},
		{"completed is not cancelable", CancelState{Task: header(a2a.TaskStateCompleted)}, "alice", ErrNotCancelable, false, nil},
		{"each config gets a delivery", CancelState{Task: header(a2a.TaskStateWorking), Configs: configs}, "alice", nil, true,
			[]changelog.Kind{changelog.TaskMoved, changelog.DeliveryDue, changelog.DeliveryDue}},
		{"a foreign task with configs leaves nothing", CancelState{Task: header(a2a.TaskStateWorking), Configs: configs}, "bob",
			ErrNotFound, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before Task
			if tc.st.Task != nil {
				before = *tc.st.Task
			}
			st := tc.st
			if tc.owner != "" {
				st.Owner = &agents.Agent{ID: tc.owner}
			}
			out, err := DecideCancel(st, tc.owner, now)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if tc.st.Task != nil && tc.st.Task.State != before.State {
				t.Fatal("the decision changed the state it was given")
			}
			if out.Changed != tc.wantChanged {
				t.Fatalf("changed %v, want %v", out.Changed, tc.wantChanged)
			}
			var kinds []changelog.Kind
			for _, e := range out.Events {
				kinds = append(kinds, e.Kind)
			}
			if len(kinds) != len(tc.wantEvents) {
				t.Fatalf("events %v, want %v", kinds, tc.wantEvents)
			}
			for i := range kinds {
				if kinds[i] != tc.wantEvents[i] {
					t.Fatalf("events %v, want %v", kinds, tc.wantEvents)
				}
			}
			if !out.Changed {
				if len(out.Deliveries) != 0 {
					t.Fatalf("an unchanged task left %d deliveries", len(out.Deliveries))
				}
				return
			}
			if out.Task.State != a2a.TaskStateCanceled || !out.Task.StatusTime.Equal(now) {
				t.Fatalf("task after: %s at %s", out.Task.State, out.Task.StatusTime)
			}
			if m := out.Events[0]; m.ID != out.Task.ID || m.Owner != "alice" || m.Ref != string(a2a.TaskStateCanceled) || !m.At.Equal(now) {
				t.Fatalf("moved event: %+v", m)
			}
			if len(out.Deliveries) != len(tc.st.Configs) {
				t.Fatalf("%d deliveries for %d configs", len(out.Deliveries), len(tc.st.Configs))
			}
			for i, d := range out.Deliveries {
				if d.State != push.Pending || !d.NextAt.Equal(now) || d.ConfigID != tc.st.Configs[i].ID || d.OwnerID != "alice" ||
					out.Events[1+i].ID != d.ID || out.Events[1+i].Ref != d.Destination {
					t.Fatalf("delivery %d: %+v, event %+v", i, d, out.Events[1+i])
				}
			}
		})
	}
}

// A decision is deterministic: deciding the same cancel twice (a rerun of
// its transaction) gives the same deliveries, which a receiver sees as
// one (the same jti).
func TestDecideCancelIsDeterministic(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	h := working()
	st := CancelState{Owner: &agents.Agent{ID: "alice"}, Task: &h, Configs: []push.Config{{ID: "c1", URL: "https://a.example.com/"}}}
	a, errA := DecideCancel(st, "alice", now)
	b, errB := DecideCancel(st, "alice", now)
	if errA != nil || errB != nil || len(a.Deliveries) != 1 || len(b.Deliveries) != 1 {
		t.Fatalf("cancel: %v, %v; deliveries %d and %d, want one each", errA, errB, len(a.Deliveries), len(b.Deliveries))
	}
	if a.Deliveries[0].ID != b.Deliveries[0].ID || string(a.Deliveries[0].Event) != string(b.Deliveries[0].Event) {
		t.Fatalf("two decisions of one cancel differ: %+v vs %+v", a.Deliveries[0], b.Deliveries[0])
	}
}

// TestDecideCancelRevoked: an owner revoked since its request was
// authenticated (or gone) cancels nothing, whatever the task; the
// operator's cancel loads no owner.
func TestDecideCancelRevoked(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	h := working()
	revoked := &agents.Agent{ID: "alice", DisabledAt: now.Add(-time.Millisecond)}
	for _, st := range []CancelState{{Owner: revoked, Task: &h}, {Owner: revoked}, {Task: &h}} {
		if out, err := DecideCancel(st, "alice", now); !errors.Is(err, agents.ErrRevoked) || out.Changed {
			t.Fatalf("a revoked owner's cancel: %+v %v", out, err)
		}
	}
	if out, err := DecideCancel(CancelState{Task: &h}, "", now); err != nil || !out.Changed {
		t.Fatalf("the operator's cancel: %+v %v", out, err)
	}
}

func TestWithStatus(t *testing.T) {
	full := working()
	moved := full
	moved.History = nil
	if !moved.CompleteByReply(ReplyRef{DiscussionID: "d1", ReplyID: "r1", AuthorID: "bob", Body: "b", At: full.StatusTime.Add(time.Hour)}) {
		t.Fatal("not completed")
	}
	got := WithStatus(full, moved)
	if got.State != a2a.TaskStateCompleted || len(got.History) != 2 || len(got.Artifacts) != 1 || got.StatusMessage == nil ||
		!got.StatusTime.Equal(moved.StatusTime) {
		t.Fatalf("WithStatus: %+v", got)
	}
}
