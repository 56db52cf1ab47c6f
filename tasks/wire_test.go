package tasks

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// hostile is text that encoding/json escapes: HTML characters, U+2028,
// quotes, backslashes.
const hostile = "<script>\"&'\u2028\\ end"

// wireTasks are tasks in every state a task reaches, with text in them.
func wireTasks(hostile string) map[string]Task {
	ctx := "ctx<&>\u2028"
	tk := working()
	tk.ContextID = ctx
	tk.History = append(tk.History, a2a.Message{MessageID: "m3", ContextID: ctx, Role: a2a.RoleUser,
		Parts:    []a2a.Part{a2a.DataPart(json.RawMessage(`{"action": "ask", "question": "` + "<b>" + `"}`)), a2a.TextPart(hostile)},
		Metadata: json.RawMessage(`{"k": [1, 2, {"x": null}]}`)})
	completed := tk
	completed.CompleteByReply(ReplyRef{DiscussionID: "d1", ReplyID: "r1", AuthorID: "bob", AuthorName: hostile,
		Body: hostile, At: time.Date(2026, 12, 3, 0, 0, 0, 123e6, time.UTC)})
	canceled := tk
	_, _ = canceled.Cancel(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
	noHistory := working()
	noHistory.History = nil
	noContext := working()
	noContext.ContextID = ""
	return map[string]Task{
		"working": tk, "completed": completed, "canceled": canceled, "no history": noHistory, "no context": noContext,
	}
}

func views() map[string]View {
	n := func(i int) *int { return &i }
	return map[string]View{
		"full": FullView, "default list": {}, "history 0": {HistoryLength: n(0), IncludeArtifacts: true},
		"history 1": {HistoryLength: n(1)}, "history 2": {HistoryLength: n(2), IncludeArtifacts: true},
		"history 99": {HistoryLength: n(99)}, "negative history": {HistoryLength: n(-1)},
	}
}

func TestWireJSONMatchesMarshal(t *testing.T) {
	// Invalid UTF-8 never passes the bindings, but the encoding still
	// matches encoding/json's (which replaces it).
	for tname, tk := range wireTasks(hostile + "\xff") {
		w, err := EncodeWire(&tk)
		if err != nil {
			t.Fatalf("%s: %v", tname, err)
		}
		for vname, v := range views() {
			if v.HistoryLength != nil && *v.HistoryLength < 0 {
				continue // refused before it reaches a task
			}
			want, err := json.Marshal(tk.Wire(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Append(nil, v); !bytes.Equal(got, want) {
				t.Errorf("%s, %s:\n got %s\nwant %s", tname, vname, got, want)
			}
		}
	}
}

func TestWireJSONDecodeRoundTrips(t *testing.T) {
	for name, tk := range wireTasks(hostile) {
		w, err := EncodeWire(&tk)
		if err != nil {
			t.Fatal(err)
		}
		// What the message fields look like after one trip through JSON.
		var want Task
		want.History, want.Artifacts, want.StatusMessage = roundTrip(t, tk.History), roundTrip(t, tk.Artifacts), roundTrip(t, tk.StatusMessage)
		var got Task
		if err := w.Decode(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got.History, want.History) || !reflect.DeepEqual(got.Artifacts, want.Artifacts) ||
			!reflect.DeepEqual(got.StatusMessage, want.StatusMessage) {
			t.Errorf("%s: decoded message fields differ:\n got %+v\nwant %+v", name, got, want)
		}
		// Encoding the decoded task again gives the same bytes.
		got.ID, got.ContextID, got.State, got.StatusTime, got.DiscussionID = tk.ID, tk.ContextID, tk.State, tk.StatusTime, tk.DiscussionID
		again, err := EncodeWire(&got)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, w) {
			t.Errorf("%s: encode(decode(w)) != w", name)
		}
	}
}

func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	var zero T
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) == "null" {
		return zero
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(out).Kind() == reflect.Slice && reflect.ValueOf(out).Len() == 0 {
		return zero
	}
	return out
}

func TestWireJSONRefusesBadHistory(t *testing.T) {
	w := WireJSON{History: []byte{0x05, 'a'}, NHistory: 1}
	var tk Task
	if err := w.Decode(&tk); err == nil {
		t.Fatal("a truncated history decoded")
	}
}

// The store encodes a reply's artifacts once for every task the reply
// completes; that holds because they depend on the reply alone.
func TestCompleteByReplyArtifactsDependOnTheReplyAlone(t *testing.T) {
	ref := ReplyRef{DiscussionID: "d1", ReplyID: "r1", AuthorID: "bob", AuthorName: "bob", Body: hostile, At: time.Now()}
	a, b := working(), working()
	b.ID, b.ContextID, b.OwnerID, b.History = "t2", "c2", "carol", nil
	if !a.CompleteByReply(ref) || !b.CompleteByReply(ref) {
		t.Fatal("not completed")
	}
	ja, _ := json.Marshal(a.Artifacts)
	jb, _ := json.Marshal(b.Artifacts)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("artifacts differ between tasks:\n%s\n%s", ja, jb)
	}
}
