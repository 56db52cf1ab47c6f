package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// taskRecord is the stored form of a task. Times are Unix milliseconds.
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

func encodeTask(t *tasks.Task) ([]byte, error) {
	return json.Marshal(taskRecord{
		ID: t.ID, ContextID: t.ContextID, OwnerID: t.OwnerID, DiscussionID: t.DiscussionID,
		MessageID: t.MessageID, State: t.State, StatusTime: t.StatusTime.UnixMilli(),
		CreatedAt: t.CreatedAt.UnixMilli(), StatusMessage: t.StatusMessage, History: t.History,
		Artifacts: t.Artifacts,
	})
}

func decodeTask(v []byte) (tasks.Task, error) {
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
