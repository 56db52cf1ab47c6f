package tasks

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// WireJSON is a task's A2A JSON cut into the pieces a View chooses from.
// It is encoded once, when the task is written, and stored with it, so a
// read copies bytes instead of decoding and encoding the task again.
// Appending the pieces gives exactly the bytes json.Marshal gives for
// t.Wire(v) (encoding/json is compositional: a struct's encoding is its
// fields' encodings, in order).
type WireJSON struct {
	// Head is `{"id":…,"contextId":…` without the closing brace.
	Head []byte
	// Status is the JSON of the A2A TaskStatus.
	Status []byte
	// Artifacts is the JSON array of the artifacts, or empty when there are
	// none.
	Artifacts []byte
	// History holds the JSON of each history message, oldest first, each
	// preceded by its length as a uvarint (see AppendHistory).
	History []byte
	// NHistory is the number of messages in History.
	NHistory int
	// Metadata is the JSON object of the task's metadata.
	Metadata []byte
}

// EncodeWire encodes t once, for storing with it.
func EncodeWire(t *Task) (WireJSON, error) {
	var w WireJSON
	head, err := json.Marshal(struct {
		ID        string `json:"id"`
		ContextID string `json:"contextId,omitempty"`
	}{t.ID, t.ContextID})
	if err != nil {
		return w, err
	}
	w.Head = head[:len(head)-1]
	if w.Status, err = EncodeStatus(t); err != nil {
		return w, err
	}
	if w.Artifacts, err = EncodeArtifacts(t); err != nil {
		return w, err
	}
	for i := range t.History {
		m, err := json.Marshal(&t.History[i])
		if err != nil {
			return w, err
		}
		w.History = AppendHistory(w.History, m)
	}
	w.NHistory = len(t.History)
	w.Metadata, err = json.Marshal(struct {
		DiscussionID string `json:"discussionId"`
	}{t.DiscussionID})
	return w, err
}

// AppendHistory appends one message's JSON to a History field.
func AppendHistory(dst, msg []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(msg)))
	return append(dst, msg...)
}

var errBadHistory = errors.New("tasks: malformed history in wire JSON")

// messages calls fn with the JSON of each history message from the
// skip'th on.
func (w *WireJSON) messages(skip int, fn func(i int, msg []byte)) error {
	b := w.History
	for i := 0; len(b) > 0; i++ {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return errBadHistory
		}
		if i >= skip {
			fn(i-skip, b[k:k+int(n)])
		}
		b = b[k+int(n):]
	}
	return nil
}

// Append appends the task's JSON under view v to dst: the same bytes as
// json.Marshal(t.Wire(v)) for the task w was encoded from.
func (w *WireJSON) Append(dst []byte, v View) []byte {
	dst = append(dst, w.Head...)
	dst = append(dst, `,"status":`...)
	dst = append(dst, w.Status...)
	if v.IncludeArtifacts {
		dst = append(dst, `,"artifacts":`...)
		if len(w.Artifacts) == 0 {
			dst = append(dst, "[]"...)
		} else {
			dst = append(dst, w.Artifacts...)
		}
	}
	n := w.NHistory
	if v.HistoryLength != nil {
		n = min(n, max(0, *v.HistoryLength))
	}
	if n > 0 {
		dst = append(dst, `,"history":[`...)
		_ = w.messages(w.NHistory-n, func(i int, msg []byte) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, msg...)
		})
		dst = append(dst, ']')
	}
	dst = append(dst, `,"metadata":`...)
	dst = append(dst, w.Metadata...)
	return append(dst, '}')
}

// Decode fills the message fields of t (StatusMessage, History,
// Artifacts) from w: what a transition or an operator needs, never a read
// that only shows the task.
func (w *WireJSON) Decode(t *Task) error {
	var st a2a.TaskStatus
	if err := json.Unmarshal(w.Status, &st); err != nil {
		return fmt.Errorf("tasks: decode status: %w", err)
	}
	t.StatusMessage = st.Message
	t.Artifacts = nil
	if len(w.Artifacts) > 0 {
		if err := json.Unmarshal(w.Artifacts, &t.Artifacts); err != nil {
			return fmt.Errorf("tasks: decode artifacts: %w", err)
		}
	}
	t.History = nil
	if w.NHistory > 0 {
		t.History = make([]a2a.Message, w.NHistory)
		var err error
		if e := w.messages(0, func(i int, msg []byte) {
			if err == nil && i < len(t.History) {
				err = json.Unmarshal(msg, &t.History[i])
			}
		}); e != nil {
			return e
		}
		if err != nil {
			return fmt.Errorf("tasks: decode history: %w", err)
		}
	}
	return nil
}

// Snapshot is a stored task as the read paths see it: who owns it, where
// it sorts, and its wire JSON as stored. Reading one decodes and copies
// nothing. A store hands snapshots to a function (Store.ViewSnapshot):
// their bytes are the store's own and valid only during that call.
type Snapshot struct {
	ID         []byte // the task id (a ULID string)
	OwnerID    []byte // the owner's agent id
	State      a2a.TaskState
	StatusTime time.Time
	Wire       WireJSON
}
