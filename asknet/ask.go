package asknet

import (
	"fmt"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

// AskState is what an ask decides on. The store loads it under the
// owner's lock (the message id, the ask window and the open tasks are
// the owner's), and the joined discussion under its own.
type AskState struct {
	// Asker is the asking agent as loaded under its lock, nil when no
	// agent has the id: a revoked asker asks nothing (agents.MayAct).
	Asker *agents.Agent
	// Retry is the owner's task for the ask's message id, nil when none:
	// an idempotent retry is answered with it, unchanged.
	Retry *tasks.Task
	// Window is the owner's ask window: the kept time of the ask rate,
	// zero when the owner never asked under one.
	Window time.Time
	// Open is how many WORKING tasks the owner has.
	Open int
	// Join is the discussion the ask joins (c.JoinDiscussionID), nil when
	// the ask opens one or no discussion has that id.
	Join *discussions.Discussion
}

// AskOutcome is what an ask does.
type AskOutcome struct {
	// Retry marks an idempotent retry: Task is the first task of the
	// message id, and nothing is written.
	Retry bool
	// Task is the new WORKING task (or the retried one).
	Task tasks.Task
	// Discussion is the discussion the ask opens, nil when it joins one.
	Discussion *discussions.Discussion
	// Push is the push notification config to store with the task, if
	// the ask sent one.
	Push *push.Config
	// Window is the owner's ask window after the ask, nil when asks are
	// not rate limited (nothing to store).
	Window *time.Time
	// Events are the change log's events of the ask.
	Events []changelog.Event
}

// DecideAsk decides ask c at now. In order: an asker revoked since its
// request was authenticated is agents.ErrRevoked; a retry of a message id the
// owner used is answered with its task; an ask over c.AskRate is a
// *ratelimit.Exceeded (reason tasks.ErrAskRate); a join of no discussion
// (or a hidden one) is a *discussions.NotFoundError, of an answered one
// discussions.ErrAnswered; an ask at c.MaxOpen WORKING tasks is a
// *ratelimit.Exceeded (reason tasks.ErrTooManyOpen). A refused ask
// spends nothing. An allowed ask's task, discussion and push config are
// the command's, unchanged, so a store may encode them once for every run
// of its transaction.
func DecideAsk(st AskState, c tasks.CreateAsk, now time.Time) (AskOutcome, error) {
	if err := agents.MayAct(st.Asker); err != nil {
		return AskOutcome{}, err
	}
	if st.Retry != nil {
		return AskOutcome{Retry: true, Task: *st.Retry}, nil
	}
	var out AskOutcome
	if c.AskRate.Enabled() {
		next, wait, ok := c.AskRate.Take(st.Window, now)
		if !ok {
			return AskOutcome{}, &ratelimit.Exceeded{
				Msg:        fmt.Sprintf("too many asks: the limit is %s per agent", c.AskRate),
				RetryAfter: wait,
				Reason:     tasks.ErrAskRate,
			}
		}
		out.Window = &next
	}
	if c.JoinDiscussionID != "" {
		switch {
		case st.Join == nil || st.Join.Hidden:
			return AskOutcome{}, &discussions.NotFoundError{ID: c.JoinDiscussionID}
		case st.Join.Status != discussions.StatusOpen:
			return AskOutcome{}, discussions.ErrAnswered
		}
	}
	if c.MaxOpen > 0 && st.Open >= c.MaxOpen {
		return AskOutcome{}, &ratelimit.Exceeded{
			Msg: fmt.Sprintf("too many open tasks: at most %d waiting tasks per agent; cancel one or wait for answers",
				c.MaxOpen),
			RetryAfter: tasks.OpenLimitRetryAfter,
			Reason:     tasks.ErrTooManyOpen,
		}
	}
	out.Task = c.Task
	out.Push = c.Push
	out.Events = []changelog.Event{tasks.CreatedEvent(&out.Task)}
	if c.JoinDiscussionID == "" {
		d := c.Discussion
		out.Discussion = &d
		out.Events = append(out.Events, discussions.OpenedEvent(&d))
	}
	return out, nil
}
