package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
)

// Full decodes the whole task: its header, messages and artifacts.
func (t *Task) Full() (tasks.Task, error) {
	full := t.Task
	if err := t.Wire.Decode(&full); err != nil {
		return tasks.Task{}, fmt.Errorf("commands: decode task %s: %w", t.ID, err)
	}
	return full, nil
}

// moved is t after a transition to header (a decision's), as stored: the
// wire's status and artifacts encoded again, its head, metadata and
// history as they are. artifacts, when not nil, carries the artifacts'
// encoding from one task to the next of one reply, which gives them all
// the same artifacts.
func moved(t *Task, header tasks.Task, artifacts *[]byte) (Task, error) {
	out := Task{Task: header, Wire: t.Wire}
	out.StatusMessage, out.History, out.Artifacts = nil, nil, nil
	var err error
	if out.Wire.Status, err = tasks.EncodeStatus(&header); err != nil {
		return Task{}, fmt.Errorf("commands: encode task %s: %w", t.ID, err)
	}
	switch {
	case len(header.Artifacts) == 0:
		out.Wire.Artifacts = nil
	case artifacts != nil && *artifacts != nil:
		out.Wire.Artifacts = *artifacts
	default:
		if out.Wire.Artifacts, err = tasks.EncodeArtifacts(&header); err != nil {
			return Task{}, fmt.Errorf("commands: encode task %s: %w", t.ID, err)
		}
		if artifacts != nil {
			*artifacts = out.Wire.Artifacts
		}
	}
	return out, nil
}

// putDeliveries adds the new deliveries a transition's decision left.
func putDeliveries(w *storage.Writes, ds []push.Delivery) {
	for i := range ds {
		storage.Put(w, Deliveries, nil, &ds[i])
	}
}

// CancelTask implements tasks.Store: the owner under a share lock (none
// for the operator's cancel), the task of ownerID under its lock
// (a reply completing it waits for the cancel, or the cancel for it, and
// the second sees the first one's state) and its push configs,
// tasks.DecideCancel, the transition, its deliveries and events. A
// stranger's task is loaded as an unknown one, not at all; the messages
// are decoded for the answer only, once the cancel is allowed.
func (c *Commands) CancelTask(ctx context.Context, ownerID, id string, at time.Time) (tasks.Task, bool, error) {
	var (
		owner   *agents.Agent
		task    *Task
		configs []push.Config
		out     tasks.CancelOutcome
		full    tasks.Task
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdCancel,
		Load: func(l storage.Loader) error {
			ownerAgent(l, ownerID, &owner)
			ref := storage.Owned(l, Tasks, k(id), ownerID, storage.Lock, &task)
			storage.Under(l, PushConfigs.Keys(), ref, maxTaskRows, storage.Read, &configs)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st := tasks.CancelState{Owner: owner, Configs: configs}
			if task != nil {
				st.Task = &task.Task
			}
			var err error
			if out, err = tasks.DecideCancel(st, ownerID, at); err != nil {
				return nil, err
			}
			if full, err = task.Full(); err != nil {
				return nil, err
			}
			full = tasks.WithStatus(full, out.Task)
			if !out.Changed {
				return nil, nil
			}
			next, err := moved(task, out.Task, nil)
			if err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Tasks, task, &next)
			putDeliveries(w, out.Deliveries)
			w.Log(at, out.Events...)
			return w, nil
		}})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return full, out.Changed, nil
}
