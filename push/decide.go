package push

import (
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
)

// The decisions of the config commands and of the deliveries a transition
// leaves. Each is pure: it takes what the store loaded (and locked) and
// returns a refusal or the effects for the store to write, with no I/O
// and no clock of its own.

// TaskRef is what the config rules need of a task: whose it is and where
// it stands. The store loads it; push cannot import tasks (tasks imports
// push).
type TaskRef struct {
	ID      string
	OwnerID string
	State   a2a.TaskState
}

// owned reports whether ownerID may act on t: its owner, or the operator
// (ownerID "").
func (t *TaskRef) owned(ownerID string) bool {
	return t != nil && (ownerID == "" || t.OwnerID == ownerID)
}

// PutState is what a config put decides on: the task (nil when no task
// has the id) and the ids of the configs it holds.
type PutState struct {
	// Owner is the agent that puts the config, as loaded under its lock
	// (nil when no agent has the id).
	Owner     *agents.Agent
	Task      *TaskRef
	ConfigIDs []string
}

// DecidePut decides whether c may be stored on its task, bounded at max
// configs (0: no bound). The task must exist and be c.OwnerID's (any
// owner when that is ""; ErrTaskNotFound for both), and still be WORKING
// (ErrTaskTerminal: a transition that has happened will not be announced
// again); a new config beyond max is ErrTooManyConfigs. created says
// whether c is new rather than a replacement of the config of its id.
//
// An owner revoked since its request was authenticated is
// agents.ErrRevoked, first.
func DecidePut(st PutState, c Config, max int) (created bool, err error) {
	if c.OwnerID != "" {
		if err := agents.MayAct(st.Owner); err != nil {
			return false, err
		}
	}
	if !st.Task.owned(c.OwnerID) {
		return false, ErrTaskNotFound
	}
	if st.Task.State.Terminal() {
		return false, ErrTaskTerminal
	}
	for _, id := range st.ConfigIDs {
		if id == c.ID {
			return false, nil
		}
	}
	if max > 0 && len(st.ConfigIDs) >= max {
		return false, TooManyError(c.TaskID)
	}
	return true, nil
}

// DeleteState is what a config delete decides on: the task (nil when no
// task has the id), whether it holds the config, and the config's
// deliveries still pending.
type DeleteState struct {
	// Owner is the agent that deletes the config, as loaded under its
	// lock (nil when no agent has the id; none for the operator's).
	Owner   *agents.Agent
	Task    *TaskRef
	Exists  bool
	Pending []Delivery
}

// DeleteOutcome is what a config delete does: whether a config goes, and
// the pending deliveries it fails (to write as they are here).
type DeleteOutcome struct {
	Deleted bool
	Failed  []Delivery
}

// DeleteReason is the Reason of a delivery whose config was deleted.
const DeleteReason = "the config was deleted before the delivery succeeded"

// DecideDelete decides the delete of config configID of the task by
// ownerID (any owner when ""): ErrTaskNotFound for an unknown or foreign
// task; a config the task does not have deletes nothing and is no error.
// The config's pending deliveries fail at now: a deleted config gets
// nothing more.
//
// An owner revoked since its request was authenticated is
// agents.ErrRevoked, first.
func DecideDelete(st DeleteState, ownerID, configID string, now time.Time) (DeleteOutcome, error) {
	if ownerID != "" {
		if err := agents.MayAct(st.Owner); err != nil {
			return DeleteOutcome{}, err
		}
	}
	if !st.Task.owned(ownerID) {
		return DeleteOutcome{}, ErrTaskNotFound
	}
	if !st.Exists {
		return DeleteOutcome{}, nil
	}
	out := DeleteOutcome{Deleted: true}
	for _, d := range st.Pending {
		if d.ConfigID != configID || d.State != Pending {
			continue
		}
		d.State, d.FinishedAt, d.NextAt, d.Reason = Failed, now, time.Time{}, DeleteReason
		out.Failed = append(out.Failed, d)
	}
	return out, nil
}

// Transition is a task's move that its configs announce.
type Transition struct {
	TaskID    string
	ContextID string
	OwnerID   string
	State     a2a.TaskState
	Message   *a2a.Message // the status message, if any
	At        time.Time    // the new status timestamp
}

// Deliveries are the deliveries transition tr leaves, one per config of
// its task, pending and due at once, with the log event of each becoming
// due. A task without configs leaves none.
func Deliveries(tr Transition, configs []Config) ([]Delivery, []changelog.Event, error) {
	if len(configs) == 0 {
		return nil, nil, nil
	}
	body, err := json.Marshal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskID: tr.TaskID, ContextID: tr.ContextID,
		Status: a2a.TaskStatus{State: tr.State, Message: tr.Message, Timestamp: a2a.FormatTime(tr.At)},
	}})
	if err != nil {
		return nil, nil, err
	}
	ds := make([]Delivery, len(configs))
	evs := make([]changelog.Event, len(configs))
	for i, c := range configs {
		ds[i] = Delivery{
			ID: DeliveryID(tr, c.ID), TaskID: tr.TaskID, ConfigID: c.ID, OwnerID: tr.OwnerID,
			Destination: Destination(c.URL), State: Pending, Event: body,
			CreatedAt: tr.At, NextAt: tr.At,
		}
		evs[i] = DueEvent(&ds[i], tr.At)
	}
	return ds, evs, nil
}

// DeliveryID is the id of the delivery of transition tr to config
// configID: a ULID of the transition's time whose entropy is a hash of
// the task, the config and the state, so that deciding the same
// transition again (a rerun of its transaction) makes the same delivery,
// and a receiver sees the same jti on every attempt.
func DeliveryID(tr Transition, configID string) string {
	sum := sha256.Sum256([]byte(tr.TaskID + "|" + configID + "|" + string(tr.State)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(tr.At))
	_ = id.SetEntropy(sum[:10])
	return id.String()
}

// DueEvent is the log event of delivery d becoming due at at.
func DueEvent(d *Delivery, at time.Time) changelog.Event {
	return changelog.Event{Kind: changelog.DeliveryDue, ID: d.ID, Owner: d.OwnerID, Ref: d.Destination, At: at}
}
