package asknet

import (
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/tasks"
)

// ReplyState is what a reply decides on. The store loads it under the
// author's lock (the reply window is the author's), then the
// discussion's, then the WORKING tasks' (in that order, so that two
// commands never wait on each other in opposite orders).
type ReplyState struct {
	// Author is the replying agent as loaded under its lock, nil when no
	// agent has the id: a revoked author posts nothing (agents.MayAct).
	Author *agents.Agent
	// Discussion is the discussion replied to, nil when none has the id.
	Discussion *discussions.Discussion
	// Window is the author's reply window: the kept time of the reply
	// rate, zero when the author never replied under one.
	Window time.Time
	// Working are the headers of the discussion's WORKING tasks, in id
	// order: what a qualifying reply may complete. Tasks that finished
	// are never loaded.
	Working []tasks.Task
	// Members are the agents with tasks on the discussion (whatever their
	// state), in agent id order: who hears of the reply.
	Members []discussions.Member
	// Configs are the push notification configs of the Working tasks, by
	// task id.
	Configs map[string][]push.Config
}

// ReplyOutcome is what a reply does.
type ReplyOutcome struct {
	// Result is the answer: the reply, whether it qualifies, what it
	// completed, how many it told.
	Result discussions.ReplyResult
	// Post is what the reply does to its discussion (the discussion after,
	// its old status, the author's window to keep).
	Post discussions.Post
	// Completed are the headers of the tasks the reply completed, after
	// the transition, in id order.
	Completed []tasks.Task
	// Inbox are the entries to write, all unacknowledged.
	Inbox []discussions.InboxEntry
	// Deliveries are the pending deliveries of the completions.
	Deliveries []push.Delivery
	// Events are the change log's events of the reply.
	Events []changelog.Event
}

// DecideReply decides reply r (its time is r.CreatedAt) under lim. An
// author revoked since its request was authenticated is
// agents.ErrRevoked; the discussion's rules refuse it (discussions.DecidePost); allowed, it is
// stored, and when it qualifies (its author is not the discussion's) it
// completes every WORKING task of the discussion but the replier's own
// (tasks.Task.CompleteByReply), each transition leaving one delivery per
// push config of its task; everyone on the discussion but the replier
// gets an inbox entry (discussions.Notices).
func DecideReply(st ReplyState, r discussions.Reply, lim discussions.Limits) (ReplyOutcome, error) {
	if err := agents.MayAct(st.Author); err != nil {
		return ReplyOutcome{}, err
	}
	post, err := discussions.DecidePost(st.Discussion, st.Window, r, lim)
	if err != nil {
		return ReplyOutcome{}, err
	}
	out := ReplyOutcome{
		Result: discussions.ReplyResult{Reply: r, Qualifying: post.Qualifying},
		Post:   post,
		Events: []changelog.Event{discussions.RepliedEvent(&r, post.Qualifying)},
	}
	if post.Qualifying {
		ref := tasks.ReplyRef{
			DiscussionID: r.DiscussionID, ReplyID: r.ID, AuthorID: r.AuthorID, AuthorName: r.AuthorName,
			Body: r.Body, At: r.CreatedAt,
		}
		if r.Origin != nil {
			ref.OriginPeer, ref.OriginURL = r.Origin.Peer, r.Origin.URL
		}
		for _, t := range st.Working {
			if !t.CompleteByReply(ref) {
				continue
			}
			out.Events = append(out.Events, tasks.MovedEvent(&t))
			ds, err := tasks.Announce(&t, st.Configs[t.ID], &out.Events)
			if err != nil {
				return ReplyOutcome{}, err
			}
			out.Deliveries = append(out.Deliveries, ds...)
			out.Completed = append(out.Completed, t)
			out.Result.CompletedTaskIDs = append(out.Result.CompletedTaskIDs, t.ID)
		}
	}
	out.Inbox = discussions.Notices(post.Discussion, r, st.Members)
	out.Result.Notified = len(out.Inbox)
	return out, nil
}

// Completes reports whether reply r on d completes task t of d when t
// waits: a qualifying reply by someone other than t's owner (what
// DecideReply does, and what kfa check verifies of the stored tasks).
func Completes(d discussions.Discussion, t tasks.Task, r discussions.Reply) bool {
	return discussions.Qualifies(d, r) && t.AnswerFor(r.AuthorID, r.DiscussionID)
}
