package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// Task records are versioned by their first byte. Format 1 was the JSON
// of taskRecord (its first byte is '{'); it is still read, so that files
// written before format 2 open, and migration 2 rewrites them. Format 2,
// written now, is binary: the fields the store needs to index, check and
// transition a task, then the task's wire JSON in the pieces of
// tasks.WireJSON, encoded once when the task is written. A read that shows
// the task copies those bytes; only a transition decodes (a little of) it.
//
//	[0]      format (2)
//	[1]      state (stateByte)
//	[2:10]   status timestamp, Unix ms, big endian
//	[10:18]  creation time, Unix ms, big endian
//	then, each as a uvarint length and its bytes:
//	         id, context id, owner id, discussion id, message id,
//	         wire head, wire status, wire artifacts, wire metadata
//	then a uvarint count of history messages, and to the end of the
//	record the history (tasks.WireJSON.History: uvarint length, JSON, ...)
const (
	taskFormatJSON   = '{'
	taskFormatBinary = 2
	taskFixedLen     = 18
)

// taskRecord is format 1, the JSON of a task. Times are Unix milliseconds.
type taskRecord struct {
	ID            string         `json:"id"`
	ContextID     string         `json:"ctx"`
	OwnerID       string         `json:"owner"`
	DiscussionID  string         `json:"disc"`
	MessageID     string         `json:"msg"`
	State         a2a.TaskState  `json:"state"`
	StatusTime    int64          `json:"ts"`
	CreatedAt     int64          `json:"created"`
	StatusMessage *a2a.Message   `json:"smsg,omitempty"`
	History       []a2a.Message  `json:"hist,omitempty"`
	Artifacts     []a2a.Artifact `json:"art,omitempty"`
}

// encodeTask encodes t in format 2.
func encodeTask(t *tasks.Task) ([]byte, error) {
	w, err := tasks.EncodeWire(t)
	if err != nil {
		return nil, fmt.Errorf("store: encode task %s: %w", t.ID, err)
	}
	return encodeTaskWire(t, &w), nil
}

// encodeTaskWire encodes t, whose wire JSON is w, in format 2.
func encodeTaskWire(t *tasks.Task, w *tasks.WireJSON) []byte {
	n := taskFixedLen + 11*binary.MaxVarintLen32 + len(t.ID) + len(t.ContextID) + len(t.OwnerID) + len(t.DiscussionID) +
		len(t.MessageID) + len(w.Head) + len(w.Status) + len(w.Artifacts) + len(w.Metadata) + len(w.History)
	b := make([]byte, 0, n)
	b = append(b, taskFormatBinary, stateByte(t.State))
	b = binary.BigEndian.AppendUint64(b, uint64(t.StatusTime.UnixMilli()))
	b = binary.BigEndian.AppendUint64(b, uint64(t.CreatedAt.UnixMilli()))
	for _, f := range []string{t.ID, t.ContextID, t.OwnerID, t.DiscussionID, t.MessageID} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	for _, f := range [][]byte{w.Head, w.Status, w.Artifacts, w.Metadata} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	b = binary.AppendUvarint(b, uint64(w.NHistory))
	return append(b, w.History...)
}

// rawTask is a format-2 record parsed in place: its slices point into the
// record's bytes.
type rawTask struct {
	state                       a2a.TaskState
	statusTime, createdAt       int64
	id, ctx, owner, disc, msgID []byte
	wire                        tasks.WireJSON
}

var errTaskRecord = errors.New("store: malformed task record")

// parseTask parses a format-2 record without copying it.
func parseTask(v []byte) (rawTask, error) {
	var r rawTask
	if len(v) < taskFixedLen || v[0] != taskFormatBinary {
		if len(v) > 0 && v[0] != taskFormatBinary {
			return r, fmt.Errorf("store: task record format %d is unknown to this kfa", v[0])
		}
		return r, errTaskRecord
	}
	r.state = stateOf(v[1])
	r.statusTime = int64(binary.BigEndian.Uint64(v[2:10]))
	r.createdAt = int64(binary.BigEndian.Uint64(v[10:18]))
	b := v[taskFixedLen:]
	for _, f := range [...]*[]byte{&r.id, &r.ctx, &r.owner, &r.disc, &r.msgID, &r.wire.Head, &r.wire.Status, &r.wire.Artifacts, &r.wire.Metadata} {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return r, errTaskRecord
		}
		end := k + int(n)
		*f = b[k:end:end]
		b = b[end:]
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return r, errTaskRecord
	}
	r.wire.NHistory, r.wire.History = int(n), b[k:]
	return r, nil
}

// header returns the task's fields without its messages.
func (r *rawTask) header() tasks.Task {
	return tasks.Task{
		ID: string(r.id), ContextID: string(r.ctx), OwnerID: string(r.owner), DiscussionID: string(r.disc),
		MessageID: string(r.msgID), State: r.state, StatusTime: time.UnixMilli(r.statusTime).UTC(),
		CreatedAt: time.UnixMilli(r.createdAt).UTC(),
	}
}

// headerOf decodes a task record of any format without its messages.
func headerOf(v []byte) (tasks.Task, error) {
	if v == nil {
		return tasks.Task{}, tasks.ErrNotFound
	}
	if v[0] == taskFormatJSON {
		return decodeTaskJSON(v)
	}
	r, err := parseTask(v)
	if err != nil {
		return tasks.Task{}, err
	}
	return r.header(), nil
}

// decodeTask decodes a task record of any format, messages included.
func decodeTask(v []byte) (tasks.Task, error) {
	if len(v) > 0 && v[0] == taskFormatJSON {
		return decodeTaskJSON(v)
	}
	r, err := parseTask(v)
	if err != nil {
		return tasks.Task{}, err
	}
	t := r.header()
	if err := r.wire.Decode(&t); err != nil {
		return tasks.Task{}, fmt.Errorf("store: decode task %s: %w", t.ID, err)
	}
	return t, nil
}

func decodeTaskJSON(v []byte) (tasks.Task, error) {
	var r taskRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return tasks.Task{}, fmt.Errorf("store: decode task: %w", err)
	}
	return tasks.Task{
		ID: r.ID, ContextID: r.ContextID, OwnerID: r.OwnerID, DiscussionID: r.DiscussionID,
		MessageID: r.MessageID, State: r.State, StatusTime: time.UnixMilli(r.StatusTime).UTC(),
		CreatedAt: time.UnixMilli(r.CreatedAt).UTC(), StatusMessage: r.StatusMessage, History: r.History,
		Artifacts: r.Artifacts,
	}, nil
}

// snapshotOf reads a task record as a snapshot without copying it: the
// snapshot points into v.
func snapshotOf(v []byte) (tasks.Snapshot, error) {
	if len(v) > 0 && v[0] == taskFormatJSON {
		t, err := decodeTaskJSON(v)
		if err != nil {
			return tasks.Snapshot{}, err
		}
		w, err := tasks.EncodeWire(&t)
		if err != nil {
			return tasks.Snapshot{}, err
		}
		return tasks.Snapshot{ID: []byte(t.ID), OwnerID: []byte(t.OwnerID), State: t.State, StatusTime: t.StatusTime, Wire: w}, nil
	}
	r, err := parseTask(v)
	if err != nil {
		return tasks.Snapshot{}, err
	}
	return tasks.Snapshot{ID: r.id, OwnerID: r.owner, State: r.state, StatusTime: time.UnixMilli(r.statusTime).UTC(), Wire: r.wire}, nil
}

func encodeJSON(v any) ([]byte, error) { return json.Marshal(v) }

func decodeDiscussion(v []byte) (discussions.Discussion, error) {
	var d discussions.Discussion
	if err := json.Unmarshal(v, &d); err != nil {
		return d, fmt.Errorf("store: decode discussion: %w", err)
	}
	return d, nil
}

func decodeReply(v []byte) (discussions.Reply, error) {
	var r discussions.Reply
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("store: decode reply: %w", err)
	}
	return r, nil
}

func decodeInbox(v []byte) (discussions.InboxEntry, error) {
	var e discussions.InboxEntry
	if err := json.Unmarshal(v, &e); err != nil {
		return e, fmt.Errorf("store: decode inbox entry: %w", err)
	}
	return e, nil
}
