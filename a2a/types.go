package a2a

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Role is the sender of a Message.
type Role string

// The roles of A2A v1.0.
const (
	RoleUnspecified Role = "ROLE_UNSPECIFIED"
	RoleUser        Role = "ROLE_USER"
	RoleAgent       Role = "ROLE_AGENT"
)

// TaskState is the state of a Task, spelled as the proto enum name.
type TaskState string

// The task states of A2A v1.0, in proto enum order.
const (
	TaskStateUnspecified   TaskState = "TASK_STATE_UNSPECIFIED"
	TaskStateSubmitted     TaskState = "TASK_STATE_SUBMITTED"
	TaskStateWorking       TaskState = "TASK_STATE_WORKING"
	TaskStateCompleted     TaskState = "TASK_STATE_COMPLETED"
	TaskStateFailed        TaskState = "TASK_STATE_FAILED"
	TaskStateCanceled      TaskState = "TASK_STATE_CANCELED"
	TaskStateInputRequired TaskState = "TASK_STATE_INPUT_REQUIRED"
	TaskStateRejected      TaskState = "TASK_STATE_REJECTED"
	TaskStateAuthRequired  TaskState = "TASK_STATE_AUTH_REQUIRED"
)

var taskStates = []TaskState{
	TaskStateUnspecified, TaskStateSubmitted, TaskStateWorking, TaskStateCompleted,
	TaskStateFailed, TaskStateCanceled, TaskStateInputRequired, TaskStateRejected,
	TaskStateAuthRequired,
}

// ParseTaskState reads a task state as ProtoJSON allows it on input: the
// enum name (any case) or its number. It reports false for anything else.
func ParseTaskState(s string) (TaskState, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n < len(taskStates) {
			return taskStates[n], true
		}
		return "", false
	}
	up := TaskState(strings.ToUpper(s))
	for _, st := range taskStates {
		if st == up {
			return st, true
		}
	}
	return "", false
}

// Terminal reports whether no further transition can leave the state.
func (s TaskState) Terminal() bool {
	switch s {
	case TaskStateCompleted, TaskStateFailed, TaskStateCanceled, TaskStateRejected:
		return true
	}
	return false
}

// TimeLayout is how A2A timestamps are written: UTC, milliseconds, "Z".
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime writes t as an A2A timestamp.
func FormatTime(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}

// ParseTime reads an ISO 8601 / RFC 3339 timestamp with any offset and any
// fractional precision.
func ParseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

// Part is one piece of a Message or Artifact. Exactly one of Text, Raw, URL
// and Data is set.
type Part struct {
	Text      *string         `json:"text,omitempty"`
	Raw       []byte          `json:"raw,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Text: &text} }

// DataPart returns a JSON data part with media type application/json.
func DataPart(data json.RawMessage) Part {
	return Part{Data: data, MediaType: "application/json"}
}

// Message is one turn of a conversation.
type Message struct {
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId,omitempty"`
	TaskID           string          `json:"taskId,omitempty"`
	Role             Role            `json:"role"`
	Parts            []Part          `json:"parts"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
}

// Artifact is an output of a Task.
type Artifact struct {
	ArtifactID  string          `json:"artifactId"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []Part          `json:"parts"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Extensions  []string        `json:"extensions,omitempty"`
}

// TaskStatus is the current state of a Task with the time it was entered.
type TaskStatus struct {
	State     TaskState `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp string    `json:"timestamp,omitempty"`
}

// Task is the unit of work A2A tracks. A nil Artifacts or History slice is
// left out of the JSON; an empty non-nil one is written as [] (ListTasks with
// includeArtifacts=true answers "artifacts": [] for a task without any).
type Task struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId,omitempty"`
	Status    TaskStatus      `json:"status"`
	Artifacts []Artifact      `json:"artifacts,omitzero"`
	History   []Message       `json:"history,omitzero"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// SendMessageConfiguration tunes one SendMessage call.
type SendMessageConfiguration struct {
	AcceptedOutputModes        []string        `json:"acceptedOutputModes,omitempty"`
	TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig,omitempty"`
	HistoryLength              *int32          `json:"historyLength,omitempty"`
	ReturnImmediately          *bool           `json:"returnImmediately,omitempty"`
}

// SendMessageRequest is the body of message:send.
type SendMessageRequest struct {
	Tenant        string                    `json:"tenant,omitempty"`
	Message       *Message                  `json:"message"`
	Configuration *SendMessageConfiguration `json:"configuration,omitempty"`
	Metadata      json.RawMessage           `json:"metadata,omitempty"`
}

// SendMessageResponse holds either a Task or a direct Message.
type SendMessageResponse struct {
	Task    *Task    `json:"task,omitempty"`
	Message *Message `json:"message,omitempty"`
}

// ListTasksResponse is one page of tasks. Every field is always present.
type ListTasksResponse struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	PageSize      int    `json:"pageSize"`
	TotalSize     int    `json:"totalSize"`
}

// CancelTaskRequest is the optional body of tasks/{id}:cancel.
type CancelTaskRequest struct {
	Tenant   string          `json:"tenant,omitempty"`
	ID       string          `json:"id,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}
