package commands

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// CreateAsk implements tasks.Store: the owner (the asker) under its lock, its task of
// the message id, its ask window and open tasks, the joined discussion
// under a share lock; asknet.DecideAsk; the task, the new discussion, the
// window, the push config and the events.
func (c *Commands) CreateAsk(ctx context.Context, cr tasks.CreateAsk) (tasks.AskResult, error) {
	x := &askRun{cr: &cr}
	if err := c.e.Run(ctx, storage.Command{Name: CmdAsk, Load: x.load, Decide: x.decide}); err != nil {
		return tasks.AskResult{}, err
	}
	res := tasks.AskResult{Task: x.out.Task, Created: !x.out.Retry, Window: x.st.Window}
	if x.out.Window != nil {
		res.Window = *x.out.Window
	}
	return res, nil
}

// askRun is one ask's plan and what its loads and decision leave.
type askRun struct {
	cr     *tasks.CreateAsk
	asker  *agents.Agent
	retry  []Task
	window *Window
	open   int
	join   *discussions.Discussion
	st     asknet.AskState
	out    asknet.AskOutcome
	// wire is the new task's encoding, made once: DecideAsk writes the
	// command's task as it is, and a store may decide more than once.
	wire *tasks.WireJSON
	task Task
	// copy is the followed document of the new discussion's origin, for
	// a question a peer forwarded here (its placeholder replaces it).
	copy *peers.Document
}

func (x *askRun) load(l storage.Loader) error {
	owner := x.cr.Task.OwnerID
	lockAgent(l, owner, &x.asker)
	storage.Many(l, TasksByMessage, k(owner, x.cr.Task.MessageID), 1, storage.Read, &x.retry)
	storage.One(l, Windows, k(WindowAsk, owner), storage.Read, &x.window)
	l.Count(TasksByOwnerState, k(owner, string(a2a.TaskStateWorking)), &x.open)
	x.join = nil
	if x.cr.JoinDiscussionID != "" {
		storage.One(l, Discussions, k(x.cr.JoinDiscussionID), storage.Share, &x.join)
	}
	x.copy = nil
	if key := peers.PlaceholderKey(x.cr.Discussion); key != "" && x.cr.JoinDiscussionID == "" {
		storage.One(l, Followed, k(key), storage.Lock, &x.copy)
	}
	return nil
}

func (x *askRun) decide() (*storage.Writes, error) {
	x.st = asknet.AskState{Asker: x.asker, Window: windowAt(x.window), Open: x.open, Join: x.join}
	if r := one(x.retry); r != nil {
		full, err := r.Full()
		if err != nil {
			return nil, err
		}
		x.st.Retry = &full
	}
	var err error
	if x.out, err = asknet.DecideAsk(x.st, *x.cr, x.cr.Task.CreatedAt); err != nil || x.out.Retry {
		return nil, err
	}
	if x.wire == nil {
		wr, err := tasks.EncodeWire(&x.out.Task)
		if err != nil {
			return nil, err
		}
		x.wire = &wr
	}
	w := &storage.Writes{Ops: make([]storage.Op, 0, 7)}
	if x.out.Discussion != nil {
		storage.Put(w, Discussions, nil, x.out.Discussion)
		if p, evs, ok := peers.DecidePlaceholder(x.copy, *x.out.Discussion, x.cr.Task.CreatedAt); ok {
			storage.Put(w, Followed, x.copy, &p)
			x.out.Events = append(x.out.Events, evs...)
		}
		post, moves := trust.QuestionPosted(*x.out.Discussion)
		storage.Put(w, Posts, nil, &post)
		addMoves(w, moves)
	}
	x.task = Task{Task: x.out.Task, Wire: *x.wire}
	x.task.StatusMessage, x.task.History, x.task.Artifacts = nil, nil, nil
	storage.Put(w, Tasks, nil, &x.task)
	putWindow(w, x.window, WindowAsk, x.cr.Task.OwnerID, x.out.Window)
	if x.out.Push != nil {
		storage.Put(w, PushConfigs, nil, x.out.Push)
	}
	w.Log(x.out.Task.CreatedAt, x.out.Events...)
	return w, nil
}
