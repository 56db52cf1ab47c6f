package tasks

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

func working() Task {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	text := "q"
	return Task{ID: "t1", ContextID: "c1", OwnerID: "alice", DiscussionID: "d1", State: a2a.TaskStateWorking,
		StatusTime: t0, CreatedAt: t0,
		History: []a2a.Message{{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
			{MessageID: "m2", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}}
}

func TestCompleteByReply(t *testing.T) {
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	ref := ReplyRef{DiscussionID: "d1", ReplyID: "r1", AuthorID: "bob", AuthorName: "bob", Body: "answer", At: at}
	for _, tc := range []struct {
		name   string
		mutate func(*Task)
		ref    ReplyRef
		want   bool
	}{
		{"working task completes", nil, ref, true},
		{"replier's own task stays", func(t *Task) { t.OwnerID = "bob" }, ref, false},
		{"other discussion stays", func(t *Task) { t.DiscussionID = "d2" }, ref, false},
		{"canceled stays", func(t *Task) { t.State = a2a.TaskStateCanceled }, ref, false},
		{"completed stays", func(t *Task) { t.State = a2a.TaskStateCompleted }, ref, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := working()
			if tc.mutate != nil {
				tc.mutate(&tk)
			}
			before := tk
			if got := tk.CompleteByReply(tc.ref); got != tc.want {
				t.Fatalf("CompleteByReply = %v, want %v", got, tc.want)
			}
			if !tc.want {
				if tk.State != before.State || !tk.StatusTime.Equal(before.StatusTime) || tk.Artifacts != nil {
					t.Fatal("a task that did not complete changed")
				}
				return
			}
			if tk.State != a2a.TaskStateCompleted || !tk.StatusTime.Equal(at) || len(tk.Artifacts) != 1 || tk.StatusMessage.Role != a2a.RoleAgent {
				t.Fatalf("completed task: %+v", tk)
			}
		})
	}
}

func TestCancelTransitions(t *testing.T) {
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	tk := working()
	if changed, err := tk.Cancel(at); !changed || err != nil || tk.State != a2a.TaskStateCanceled || !tk.StatusTime.Equal(at) {
		t.Fatalf("cancel working: %v %v %+v", changed, err, tk)
	}
	if changed, err := tk.Cancel(at.Add(time.Hour)); changed || err != nil || !tk.StatusTime.Equal(at) {
		t.Fatalf("cancel canceled: %v %v %s", changed, err, tk.StatusTime)
	}
	done := working()
	done.State = a2a.TaskStateCompleted
	if _, err := done.Cancel(at); err != ErrNotCancelable {
		t.Fatalf("cancel completed: %v", err)
	}
}

func TestWireViews(t *testing.T) {
	tk := working()
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		name        string
		view        View
		history     int
		hasHistory  bool
		hasArtifact bool
	}{
		{"all history", View{IncludeArtifacts: true}, 2, true, true},
		{"no history", View{HistoryLength: n(0)}, 0, false, false},
		{"last one", View{HistoryLength: n(1)}, 1, true, false},
		{"more than there is", View{HistoryLength: n(10)}, 2, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tk.Wire(tc.view)
			b, _ := json.Marshal(w)
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			_, hasHistory := m["history"]
			_, hasArtifacts := m["artifacts"]
			if hasHistory != tc.hasHistory || hasArtifacts != tc.hasArtifact || len(w.History) != tc.history {
				t.Fatalf("%s: %s", tc.name, b)
			}
			if tc.history == 1 && w.History[0].MessageID != "m2" {
				t.Fatal("historyLength must keep the most recent messages")
			}
			if string(m["metadata"]) != `{"discussionId":"d1"}` || w.Status.Timestamp != "2026-12-02T10:00:00.000Z" {
				t.Fatalf("metadata/timestamp: %s", b)
			}
		})
	}
}
