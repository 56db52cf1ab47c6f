package tasks

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// Sentinel errors.
var (
	// ErrNotFound is returned for a task that does not exist and, identically,
	// for a task of another agent.
	ErrNotFound = errors.New("task not found")
	// ErrNotCancelable is returned when canceling a completed task.
	ErrNotCancelable = errors.New("task is not cancelable")
	// ErrTooManyOpen is the reason of an ask refused at the open-task
	// limit (a *ratelimit.Exceeded).
	ErrTooManyOpen = errors.New("too many open tasks")
	// ErrAskRate is the reason of an ask refused over the ask rate (a
	// *ratelimit.Exceeded).
	ErrAskRate = errors.New("too many asks")
	// ErrNotWorking is returned by a transition from a state other than WORKING.
	ErrNotWorking = errors.New("task is not working")
)

// Task is an ask-network task. Times are UTC with millisecond precision.
type Task struct {
	ID           string
	ContextID    string
	OwnerID      string
	DiscussionID string
	MessageID    string // the ask's messageId: the idempotency key per owner
	State        a2a.TaskState
	// StatusTime is the persisted status.timestamp. It changes only on
	// creation, completion by a qualifying reply and cancellation.
	StatusTime    time.Time
	CreatedAt     time.Time
	StatusMessage *a2a.Message
	History       []a2a.Message
	Artifacts     []a2a.Artifact
}

// ReplyRef is what a task needs to know of the reply that completes it.
type ReplyRef struct {
	DiscussionID string
	ReplyID      string
	AuthorID     string
	AuthorName   string
	Body         string
	At           time.Time
	// OriginPeer and OriginURL, for a reply that came back from a peer
	// (federation), name the peer and the reply's page there: the
	// artifact's data part carries them as origin.
	OriginPeer string
	OriginURL  string
}

// replyOrigin is the origin member of a reply artifact's data part.
type replyOrigin struct {
	Peer string `json:"peer"`
	URL  string `json:"url,omitempty"`
}

// CompleteByReply moves a WORKING task to COMPLETED with r as its answer:
// a ROLE_AGENT status message and one artifact holding the reply text and
// a data part naming the reply. Tasks owned by the replier are left alone
// (no one answers their own question); other states are never touched.
// It reports whether the task changed.
func (t *Task) CompleteByReply(r ReplyRef) bool {
	if !t.Waiting() || !t.AnswerFor(r.AuthorID, r.DiscussionID) {
		return false
	}
	var origin *replyOrigin
	if r.OriginPeer != "" {
		origin = &replyOrigin{Peer: r.OriginPeer, URL: r.OriginURL}
	}
	ref, _ := json.Marshal(struct {
		DiscussionID string       `json:"discussionId"`
		ReplyID      string       `json:"replyId"`
		AuthorID     string       `json:"authorId"`
		AuthorName   string       `json:"authorName"`
		Origin       *replyOrigin `json:"origin,omitempty"`
	}{r.DiscussionID, r.ReplyID, r.AuthorID, r.AuthorName, origin})
	t.State = a2a.TaskStateCompleted
	t.StatusTime = r.At
	t.StatusMessage = &a2a.Message{
		MessageID: "reply-" + r.ReplyID,
		ContextID: t.ContextID,
		TaskID:    t.ID,
		Role:      a2a.RoleAgent,
		Parts:     []a2a.Part{a2a.TextPart(r.AuthorName + " replied on discussion " + r.DiscussionID + "; the reply is this task's artifact.")},
	}
	t.Artifacts = []a2a.Artifact{{
		ArtifactID:  "reply-" + r.ReplyID,
		Name:        "reply",
		Description: "The community reply that answered this question. Untrusted public content.",
		Parts:       []a2a.Part{a2a.TextPart(r.Body), a2a.DataPart(ref)},
	}}
	return true
}

// Cancel moves a WORKING task to CANCELED at the given time. Canceling a
// canceled task changes nothing (changed is false); any other state is
// ErrNotCancelable.
func (t *Task) Cancel(at time.Time) (changed bool, err error) {
	switch t.State {
	case a2a.TaskStateWorking:
		t.State = a2a.TaskStateCanceled
		t.StatusTime = at
		return true, nil
	case a2a.TaskStateCanceled:
		return false, nil
	default:
		return false, ErrNotCancelable
	}
}

// View says how much of a task to show.
type View struct {
	// HistoryLength: nil shows all history, 0 none (no history key), n the
	// last n messages.
	HistoryLength *int
	// IncludeArtifacts: when false the artifacts key is left out.
	IncludeArtifacts bool
}

// FullView shows everything.
var FullView = View{IncludeArtifacts: true}

// Wire returns the task as an A2A Task under view v.
func (t *Task) Wire(v View) a2a.Task {
	meta, _ := json.Marshal(struct {
		DiscussionID string `json:"discussionId"`
	}{t.DiscussionID})
	w := a2a.Task{
		ID:        t.ID,
		ContextID: t.ContextID,
		Status: a2a.TaskStatus{
			State:     t.State,
			Message:   t.StatusMessage,
			Timestamp: a2a.FormatTime(t.StatusTime),
		},
		Metadata: meta,
	}
	if v.IncludeArtifacts {
		w.Artifacts = t.Artifacts
		if w.Artifacts == nil {
			w.Artifacts = []a2a.Artifact{}
		}
	}
	switch {
	case v.HistoryLength == nil:
		w.History = t.History
	case *v.HistoryLength > 0:
		h := t.History
		if len(h) > *v.HistoryLength {
			h = h[len(h)-*v.HistoryLength:]
		}
		w.History = h
	}
	return w
}

// Reachable reports whether s is a state an ask-network task takes:
// working, then completed by a reply or canceled.
func Reachable(s a2a.TaskState) bool {
	return s == a2a.TaskStateWorking || s == a2a.TaskStateCompleted || s == a2a.TaskStateCanceled
}

// Waiting reports whether t waits for an answer (WORKING): a reply may
// complete it, a cancel end it.
func (t *Task) Waiting() bool { return t.State == a2a.TaskStateWorking }

// AnswerFor reports whether a reply by author on discussion disc answers
// t, whatever t's state: no one answers their own question, nor one on
// another discussion.
func (t *Task) AnswerFor(author, disc string) bool {
	return t.OwnerID != author && t.DiscussionID == disc
}

// Answered reports whether a reply completed t.
func (t *Task) Answered() bool { return t.State == a2a.TaskStateCompleted }
