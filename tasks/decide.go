package tasks

import (
	"encoding/json"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
)

// The decision of a cancel, and what every transition leaves. A decision
// is pure: it takes what the store loaded (and locked) and returns a
// refusal or the effects for the store to write.
//
// Decisions work on a task's header (its ids, owner, state and status
// time; History may be left out): a transition changes only the status
// and the artifacts, so the store can write it without decoding the
// messages, and a refusal never decodes them at all.

// CancelState is what a cancel decides on.
type CancelState struct {
	// Owner is the canceling agent as loaded under its lock (nil when no
	// agent has the id); an operator's cancel (owner "") has none.
	Owner *agents.Agent
	// Task is the stored task's header, nil when no task has the id.
	Task *Task
	// Configs are the task's push notification configs: a cancel leaves
	// one delivery for each.
	Configs []push.Config
}

// CancelOutcome is what a cancel does.
type CancelOutcome struct {
	// Task is the header after the cancel (as loaded when unchanged).
	Task Task
	// Changed is false for a task canceled already: nothing to write.
	Changed bool
	// Deliveries are the pending deliveries of the transition.
	Deliveries []push.Delivery
	// Events are the change log's events of the cancel.
	Events []changelog.Event
}

// DecideCancel decides a cancel of the task by ownerID (any owner when
// ownerID is "", the operator) at now: agents.ErrRevoked for an owner
// revoked since its request was authenticated; ErrNotFound for an
// unknown task and, identically, another agent's; Task.Cancel's rule
// otherwise.
func DecideCancel(st CancelState, ownerID string, now time.Time) (CancelOutcome, error) {
	if ownerID != "" {
		if err := agents.MayAct(st.Owner); err != nil {
			return CancelOutcome{}, err
		}
	}
	if st.Task == nil || (ownerID != "" && st.Task.OwnerID != ownerID) {
		return CancelOutcome{}, ErrNotFound
	}
	t := *st.Task
	changed, err := t.Cancel(now)
	if err != nil {
		return CancelOutcome{}, err
	}
	out := CancelOutcome{Task: t, Changed: changed}
	if !changed {
		return out, nil
	}
	out.Events = append(out.Events, MovedEvent(&t))
	if out.Deliveries, err = Announce(&t, st.Configs, &out.Events); err != nil {
		return CancelOutcome{}, err
	}
	return out, nil
}

// Announce returns the deliveries of t's transition to the task's
// configs, and adds the events of their becoming due to evs.
func Announce(t *Task, configs []push.Config, evs *[]changelog.Event) ([]push.Delivery, error) {
	ds, due, err := push.Deliveries(push.Transition{
		TaskID: t.ID, ContextID: t.ContextID, OwnerID: t.OwnerID, State: t.State, Message: t.StatusMessage, At: t.StatusTime,
	}, configs)
	*evs = append(*evs, due...)
	return ds, err
}

// CreatedEvent is the log event of an ask creating t.
func CreatedEvent(t *Task) changelog.Event {
	return changelog.Event{Kind: changelog.TaskCreated, ID: t.ID, Owner: t.OwnerID, Ref: t.DiscussionID, At: t.CreatedAt}
}

// MovedEvent is the log event of t's transition.
func MovedEvent(t *Task) changelog.Event {
	return changelog.Event{Kind: changelog.TaskMoved, ID: t.ID, Owner: t.OwnerID, Ref: string(t.State), At: t.StatusTime}
}

// WithStatus is full, the stored task with its messages, carrying the
// status and artifacts moved (a decision's header of the same task) has:
// the task a transition leaves, for answers that show it whole.
func WithStatus(full, moved Task) Task {
	full.State, full.StatusTime, full.StatusMessage, full.Artifacts = moved.State, moved.StatusTime, moved.StatusMessage, moved.Artifacts
	return full
}

// EncodeStatus encodes t's status as its wire JSON holds it: one of the
// two parts a transition changes.
func EncodeStatus(t *Task) ([]byte, error) {
	return json.Marshal(a2a.TaskStatus{State: t.State, Message: t.StatusMessage, Timestamp: a2a.FormatTime(t.StatusTime)})
}

// EncodeArtifacts encodes t's artifacts as its wire JSON holds them (nil
// when it has none): the other part a transition changes.
func EncodeArtifacts(t *Task) ([]byte, error) {
	if len(t.Artifacts) == 0 {
		return nil, nil
	}
	return json.Marshal(t.Artifacts)
}
