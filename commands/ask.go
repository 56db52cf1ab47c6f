package commands

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
)

// CreateAsk implements tasks.Store: the owner under its lock, its task of
// the message id, its ask window and open tasks, the joined discussion
// under a share lock; asknet.DecideAsk; the task, the new discussion, the
// window, the push config and the events.
func (c *Commands) CreateAsk(ctx context.Context, cr tasks.CreateAsk) (tasks.AskResult, error) {
	var (
		owner  *agents.Agent
		retry  []Task
		window *Window
		open   int
		join   *discussions.Discussion
		st     asknet.AskState
		out    asknet.AskOutcome
		// wire is the new task's encoding, made once: DecideAsk writes the
		// command's task as it is, and a store may decide more than once.
		wire *tasks.WireJSON
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdAsk,
		Load: func(l storage.Loader) error {
			lockAgent(l, cr.Task.OwnerID, &owner)
			storage.Many(l, TasksByMessage, k(cr.Task.OwnerID, cr.Task.MessageID), 1, storage.Read, &retry)
			storage.One(l, Windows, k(WindowAsk, cr.Task.OwnerID), storage.Read, &window)
			l.Count(TasksByOwnerState, k(cr.Task.OwnerID, string(a2a.TaskStateWorking)), &open)
			join = nil
			if cr.JoinDiscussionID != "" {
				storage.One(l, Discussions, k(cr.JoinDiscussionID), storage.Share, &join)
			}
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st = asknet.AskState{Window: windowAt(window), Open: open, Join: join}
			if r := one(retry); r != nil {
				full, err := r.Full()
				if err != nil {
					return nil, err
				}
				st.Retry = &full
			}
			var err error
			if out, err = asknet.DecideAsk(st, cr, cr.Task.CreatedAt); err != nil || out.Retry {
				return nil, err
			}
			if wire == nil {
				wr, err := tasks.EncodeWire(&out.Task)
				if err != nil {
					return nil, err
				}
				wire = &wr
			}
			w := &storage.Writes{}
			if out.Discussion != nil {
				storage.Put(w, Discussions, nil, out.Discussion)
			}
			task := Task{Task: out.Task, Wire: *wire}
			task.StatusMessage, task.History, task.Artifacts = nil, nil, nil
			storage.Put(w, Tasks, nil, &task)
			putWindow(w, window, WindowAsk, cr.Task.OwnerID, out.Window)
			if out.Push != nil {
				storage.Put(w, PushConfigs, nil, out.Push)
			}
			w.Log(out.Task.CreatedAt, out.Events...)
			return w, nil
		}})
	if err != nil {
		return tasks.AskResult{}, err
	}
	res := tasks.AskResult{Task: out.Task, Created: !out.Retry, Window: st.Window}
	if out.Window != nil {
		res.Window = *out.Window
	}
	return res, nil
}
