package commands

import (
	"context"
	"fmt"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// maxDiscussionTasks bounds what a reply loads of its discussion's tasks
// (the WORKING ones, and every member's): far beyond what the open-task
// bound lets agents put on one discussion.
const maxDiscussionTasks = 1 << 20

// AddReply implements discussions.Store: the author under its lock and its
// reply window, the discussion under its lock, its WORKING tasks under
// theirs (headers) with their push configs, its members;
// asknet.DecideReply; the reply, the window, the completions and their
// deliveries, the discussion, the inbox entries and the events. The locks
// come in the order agent, discussion, tasks: replies to one discussion
// are decided one at a time, one author's too (the reply rate holds
// across discussions and processes), and a cancel racing the reply waits,
// or is waited for and then skipped. Nothing a reply does not complete or
// tell is read: not the tasks that are done with.
func (c *Commands) AddReply(ctx context.Context, r discussions.Reply, lim discussions.Limits) (discussions.ReplyResult, error) {
	x := &replyRun{r: &r, lim: lim}
	if err := c.e.Run(ctx, storage.Command{Name: CmdReply, Load: x.load, Decide: x.decide}); err != nil {
		return discussions.ReplyResult{}, err
	}
	return x.out.Result, nil
}

// replyRun is one reply's plan and what its loads and decision leave.
type replyRun struct {
	r       *discussions.Reply
	lim     discussions.Limits
	author  *agents.Agent
	window  *Window
	disc    *discussions.Discussion
	working []Task
	configs []push.Config
	members []storage.Key
	out     asknet.ReplyOutcome
}

func (x *replyRun) load(l storage.Loader) error {
	r := x.r
	lockAgent(l, r.AuthorID, &x.author)
	storage.One(l, Windows, k(WindowReply, r.AuthorID), storage.Read, &x.window)
	storage.One(l, Discussions, k(r.DiscussionID), storage.Lock, &x.disc)
	ref := l.Range(storage.Range{Index: TasksWorking, Prefix: k(r.DiscussionID), Of: storage.NoRef,
		Limit: maxDiscussionTasks, Mode: storage.Lock, Brief: true, Dst: &x.working})
	storage.Under(l, PushConfigs.Keys(), ref, maxDiscussionTasks, storage.Read, &x.configs)
	storage.Entries(l, TasksOfDiscussion, k(r.DiscussionID), maxDiscussionTasks, &x.members)
	return nil
}

func (x *replyRun) decide() (*storage.Writes, error) {
	st := asknet.ReplyState{Author: x.author, Discussion: x.disc, Window: windowAt(x.window), Members: membersOf(x.members)}
	if len(x.working) > 0 {
		st.Working = make([]tasks.Task, len(x.working))
		for i := range x.working {
			st.Working[i] = x.working[i].Task
		}
	}
	for _, cfg := range x.configs {
		if st.Configs == nil {
			st.Configs = map[string][]push.Config{}
		}
		st.Configs[cfg.TaskID] = append(st.Configs[cfg.TaskID], cfg)
	}
	var err error
	if x.out, err = asknet.DecideReply(st, *x.r, x.lim); err != nil {
		return nil, err
	}
	return replyWrites(&x.out, x.disc, x.window, x.working)
}

// replyWrites are the writes of a reply decided as o on disc, whose
// author's window was window and whose WORKING tasks were working.
func replyWrites(o *asknet.ReplyOutcome, disc *discussions.Discussion, window *Window, working []Task) (*storage.Writes, error) {
	r := &o.Result.Reply
	w := &storage.Writes{Ops: make([]storage.Op, 0, 6+2*len(o.Completed)+len(o.Deliveries)+len(o.Inbox))}
	storage.Put(w, Replies, nil, r)
	if post, moves := trust.AnswerPosted(o.Post.Discussion, *r); post != nil {
		storage.Put(w, Posts, nil, post)
		addMoves(w, moves)
	}
	putWindow(w, window, WindowReply, r.AuthorID, o.Post.Window)
	before := make(map[string]*Task, len(working))
	for i := range working {
		before[working[i].ID] = &working[i]
	}
	var artifacts []byte // the same for every task the reply completes
	for i := range o.Completed {
		old, ok := before[o.Completed[i].ID]
		if !ok {
			return nil, fmt.Errorf("commands: the reply completed task %s, which it did not load", o.Completed[i].ID)
		}
		next, err := moved(old, o.Completed[i], &artifacts)
		if err != nil {
			return nil, err
		}
		storage.Put(w, Tasks, old, &next)
	}
	putDeliveries(w, o.Deliveries)
	storage.Put(w, Discussions, disc, &o.Post.Discussion)
	for i := range o.Inbox {
		storage.Put(w, Inbox, nil, &o.Inbox[i])
	}
	w.Log(r.CreatedAt, o.Events...)
	return w, nil
}

// membersOf groups TasksOfDiscussion's entries (discussion, owner, task),
// in key order, into the discussion's members.
func membersOf(entries []storage.Key) []discussions.Member {
	var out []discussions.Member
	for _, e := range entries {
		if len(e) != 3 {
			continue
		}
		if n := len(out); n == 0 || out[n-1].AgentID != e[1] {
			out = append(out, discussions.Member{AgentID: e[1]})
		}
		m := &out[len(out)-1]
		m.TaskIDs = append(m.TaskIDs, e[2])
	}
	return out
}
