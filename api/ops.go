package api

import (
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// The operator's shapes: what the admin channel answers and what
// `kfa ... --json` prints. docs/cli.md documents them; fields are only
// ever added.

// Task is a task as an operator sees it: who owns it and where it waits,
// without its messages (TaskDetail has those).
type Task struct {
	ID              string `json:"id"`
	State           string `json:"state"`
	StatusTimestamp string `json:"statusTimestamp"`
	CreatedAt       string `json:"createdAt"`
	OwnerID         string `json:"ownerId"`
	OwnerName       string `json:"ownerName"`
	ContextID       string `json:"contextId"`
	DiscussionID    string `json:"discussionId"`
	MessageID       string `json:"messageId"`
	// ReplyID is the reply that completed the task, for COMPLETED tasks.
	ReplyID string `json:"replyId,omitempty"`
}

// FromTask converts a task; ownerName is looked up by the caller.
func FromTask(t tasks.Task, ownerName string) Task {
	out := Task{
		ID: t.ID, State: string(t.State), StatusTimestamp: ts(t.StatusTime), CreatedAt: ts(t.CreatedAt),
		OwnerID: t.OwnerID, OwnerName: ownerName, ContextID: t.ContextID, DiscussionID: t.DiscussionID,
		MessageID: t.MessageID,
	}
	if t.State == a2a.TaskStateCompleted && len(t.Artifacts) == 1 {
		if id, ok := strings.CutPrefix(t.Artifacts[0].ArtifactID, "reply-"); ok {
			out.ReplyID = id
		}
	}
	return out
}

// TaskList is a page of tasks, newest status timestamp first.
type TaskList struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	// TotalSize counts every task matching the filters, across pages.
	TotalSize int `json:"totalSize"`
}

// TaskDetail is one task in full: the operator's summary, the task exactly
// as its owner reads it over A2A, and its discussion with the replies.
type TaskDetail struct {
	Task Task     `json:"task"`
	A2A  a2a.Task `json:"a2a"`
	// Discussion is nil only when the task's discussion is missing (which
	// kfa check reports).
	Discussion *Discussion `json:"discussion"`
}

// CancelResult is the answer to an operator cancel.
type CancelResult struct {
	Task Task `json:"task"`
	// Changed is false when the task was already canceled.
	Changed bool `json:"changed"`
}

// OperatorReplyRequest is the body of POST
// /admin/v1/discussions/{id}/replies: a reply posted by the operator on
// behalf of agent AgentID.
type OperatorReplyRequest struct {
	AgentID string  `json:"agentId"`
	Body    *string `json:"body"`
}

// Stats describe a kfa database.
type Stats struct {
	Database    DatabaseStats   `json:"database"`
	Tasks       TaskStats       `json:"tasks"`
	Discussions DiscussionStats `json:"discussions"`
	Agents      int             `json:"agents"`
	Records     int             `json:"records"`
	// LogPosition is the change log's newest position ("0" before the
	// first change): every write appends to the log.
	LogPosition string `json:"logPosition"`
	// IndexLag is how many feed changes the search index has not applied
	// yet; null when this server cannot tell.
	IndexLag *int64 `json:"indexLag"`
	// Peers are the peers this server follows or forwards to
	// (federation), when it has any.
	Peers []Peer `json:"peers,omitempty"`
}

// The stores DatabaseStats.Backend names.
const (
	BackendBBolt    = "bbolt"
	BackendPostgres = "postgresql"
)

// DatabaseStats describe the database: the bbolt file, or the PostgreSQL
// database (which has no pages: those fields are 0).
type DatabaseStats struct {
	Path string `json:"path"`
	// Backend is BackendBBolt or BackendPostgres.
	Backend       string `json:"backend"`
	SchemaVersion int    `json:"schemaVersion"`
	// SizeBytes is the file's size (as a backup copies it), or the
	// PostgreSQL database's (pg_database_size; 0 when it could not be
	// read).
	SizeBytes    int64 `json:"sizeBytes"`
	PageSize     int   `json:"pageSize"`
	FreePages    int   `json:"freePages"`
	PendingPages int   `json:"pendingPages"`
}

// TaskStats count tasks.
type TaskStats struct {
	Total int `json:"total"`
	// ByState counts tasks per state name (TASK_STATE_WORKING, ...); the
	// three states ask-network uses are always present.
	ByState       map[string]int `json:"byState"`
	OldestWaiting *WaitingTask   `json:"oldestWaiting"`
}

// WaitingTask is the task that has waited longest.
type WaitingTask struct {
	ID      string `json:"id"`
	OwnerID string `json:"ownerId"`
	Since   string `json:"since"`
}

// DiscussionStats count discussions.
type DiscussionStats struct {
	Total    int `json:"total"`
	Open     int `json:"open"`
	Answered int `json:"answered"`
}

// CheckReport is the result of kfa check.
type CheckReport struct {
	OK            bool   `json:"ok"`
	Path          string `json:"path"`
	SchemaVersion int    `json:"schemaVersion"`
	// Examined counts the entries checked, by bucket.
	Examined   map[string]int `json:"examined"`
	Violations []Violation    `json:"violations"`
	// Truncated counts violations found beyond those listed.
	Truncated int      `json:"truncated"`
	Notes     []string `json:"notes"`
}

// Violation is one broken invariant.
type Violation struct {
	Kind   string `json:"kind"`
	Bucket string `json:"bucket,omitempty"`
	Key    string `json:"key,omitempty"`
	KeyHex string `json:"keyHex,omitempty"`
	TaskID string `json:"taskId,omitempty"`
	Detail string `json:"detail"`
}
