package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

func testAsk(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a := e.agent(t, "alice")

	tk := e.ask(t, a, "m1")
	mustState(t, tk, a2a.TaskStateWorking)
	if tk.OwnerID != a.ID || tk.DiscussionID == "" || tk.ContextID == "" || len(tk.History) != 1 {
		t.Fatalf("ask task: %+v", tk)
	}
	if h := tk.History[0]; h.TaskID != tk.ID || h.ContextID != tk.ContextID || h.MessageID != "m1" {
		t.Fatalf("history message not bound to the task: %+v", h)
	}
	d, err := e.store.GetDiscussion(ctx, tk.DiscussionID)
	if err != nil || d.Status != discussions.StatusOpen || d.AuthorID != a.ID || d.Title != "question m1" {
		t.Fatalf("discussion: %+v %v", d, err)
	}
	got := e.task(t, tk.ID)
	if got.State != tk.State || !got.StatusTime.Equal(tk.StatusTime) || got.DiscussionID != tk.DiscussionID {
		t.Fatalf("stored task differs: %+v vs %+v", got, tk)
	}

	// The same message id again: the first task, no second task or discussion.
	e.clock.Advance(time.Second)
	again, created, err := e.tk.Ask(ctx, askInput(a, "m1", "a different question"))
	if err != nil || created || again.ID != tk.ID || !again.StatusTime.Equal(tk.StatusTime) {
		t.Fatalf("retry: created=%v %+v %v", created, again, err)
	}
	page, err := e.store.ListDiscussions(ctx, discussions.ListQuery{PageSize: 10})
	if err != nil || page.Total != 1 || len(page.Discussions) != 1 {
		t.Fatalf("discussions after retry: %+v %v", page, err)
	}
	list, err := e.tk.List(ctx, a.ID, tasks.ListParams{})
	if err != nil || list.TotalSize != 1 {
		t.Fatalf("tasks after retry: %+v %v", list, err)
	}

	// Another agent may use the same message id: it is a different ask.
	b := e.agent(t, "bob")
	other := e.ask(t, b, "m1")
	if other.ID == tk.ID {
		t.Fatal("message ids are per agent")
	}
	// The caller's context id is kept.
	in := askInput(a, "m2", "with context")
	in.Message.ContextID = "ctx-42"
	withCtx, _, err := e.tk.Ask(ctx, in)
	if err != nil || withCtx.ContextID != "ctx-42" {
		t.Fatalf("context id: %+v %v", withCtx, err)
	}
	if _, err := e.tk.Get(ctx, b.ID, tk.ID); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("foreign get: %v", err)
	}
	if _, err := e.tk.Get(ctx, a.ID, "01JD0000000000000000000000"); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("missing get: %v", err)
	}
	if _, err := e.tk.Get(ctx, a.ID, "not-a-ulid"); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("malformed id get: %v", err)
	}
}

func testAskJoin(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	first := e.ask(t, a, "m1")
	joined := e.join(t, b, "b1", first.DiscussionID)
	if joined.DiscussionID != first.DiscussionID || joined.OwnerID != b.ID {
		t.Fatalf("joined: %+v", joined)
	}
	page, _ := e.store.ListDiscussions(ctx, discussions.ListQuery{PageSize: 10})
	if page.Total != 1 {
		t.Fatalf("join opened a discussion: %+v", page)
	}
	in := askInput(b, "b2", "")
	in.JoinDiscussionID = "01JD0000000000000000000000"
	if _, _, err := e.tk.Ask(ctx, in); !isErr(err, discussions.ErrNotFound) {
		t.Fatalf("join unknown: %v", err)
	}
	// One qualifying reply completes both waiting tasks.
	r := e.reply(t, c, first.DiscussionID, "answer")
	if len(r.CompletedTaskIDs) != 2 {
		t.Fatalf("completed %v, want both tasks", r.CompletedTaskIDs)
	}
	in.JoinDiscussionID = first.DiscussionID
	in.Message.MessageID = "b3"
	if _, _, err := e.tk.Ask(ctx, in); !isErr(err, discussions.ErrAnswered) {
		t.Fatalf("join answered: %v", err)
	}
}

func testMaxOpen(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{MaxOpen: 3})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	var last tasks.Task
	for i := range 3 {
		last = e.ask(t, a, fmt.Sprintf("m%d", i))
	}
	_, _, err := e.tk.Ask(ctx, askInput(a, "m3", "one too many"))
	var rl *tasks.RateLimitError
	if !asRateLimit(err, &rl) || !errors.Is(err, tasks.ErrTooManyOpen) || rl.RetryAfter <= 0 {
		t.Fatalf("4th open ask: %v", err)
	}
	// The refused ask wrote nothing.
	if l, _ := e.tk.List(ctx, a.ID, tasks.ListParams{}); l.TotalSize != 3 {
		t.Fatalf("tasks after refusal: %d", l.TotalSize)
	}
	// A retry of an existing ask is still answered at the limit.
	if again, created, err := e.tk.Ask(ctx, askInput(a, "m0", "x")); err != nil || created {
		t.Fatalf("retry at limit: %+v %v", again, err)
	}
	// Other agents are not affected, and canceling frees a slot.
	e.ask(t, b, "b0")
	if _, _, err := e.tk.Cancel(ctx, a.ID, last.ID); err != nil {
		t.Fatal(err)
	}
	e.ask(t, a, "m4")
}

func testCancel(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk := e.ask(t, a, "m1")
	e.clock.Advance(time.Second)

	if _, _, err := e.tk.Cancel(ctx, b.ID, tk.ID); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("foreign cancel: %v", err)
	}
	c1, changed, err := e.tk.Cancel(ctx, a.ID, tk.ID)
	if err != nil || !changed {
		t.Fatalf("cancel: %v %v", changed, err)
	}
	mustState(t, c1, a2a.TaskStateCanceled)
	if !c1.StatusTime.Equal(e.clock.Now()) {
		t.Fatalf("cancel timestamp %s, want %s", c1.StatusTime, e.clock.Now())
	}
	e.clock.Advance(time.Second)
	c2, changed, err := e.tk.Cancel(ctx, a.ID, tk.ID)
	if err != nil || changed || !c2.StatusTime.Equal(c1.StatusTime) {
		t.Fatalf("cancel again: %+v %v %v", c2.StatusTime, changed, err)
	}
	// The discussion stays, and so do its replies.
	e.reply(t, b, tk.DiscussionID, "late answer")
	d, replies, err := e.ds.Get(ctx, tk.DiscussionID, nil, "")
	if err != nil || len(replies.Replies) != 1 || d.ReplyCount != 1 {
		t.Fatalf("discussion after cancel: %+v %d %v", d, len(replies.Replies), err)
	}
	mustState(t, e.task(t, tk.ID), a2a.TaskStateCanceled)

	// A completed task is not cancelable, for its owner or the operator.
	done := e.ask(t, a, "m2")
	e.reply(t, b, done.DiscussionID, "answer")
	if _, _, err := e.tk.Cancel(ctx, a.ID, done.ID); !isErr(err, tasks.ErrNotCancelable) {
		t.Fatalf("cancel completed: %v", err)
	}
	if _, _, err := e.tk.Cancel(ctx, "", done.ID); !isErr(err, tasks.ErrNotCancelable) {
		t.Fatalf("operator cancel completed: %v", err)
	}
	// The operator may cancel anyone's waiting task.
	w := e.ask(t, a, "m3")
	if op, changed, err := e.tk.Cancel(ctx, "", w.ID); err != nil || !changed || op.State != a2a.TaskStateCanceled {
		t.Fatalf("operator cancel: %+v %v", op, err)
	}
	if _, _, err := e.tk.Cancel(ctx, a.ID, "01JD0000000000000000000000"); !isErr(err, tasks.ErrNotFound) {
		t.Fatalf("cancel missing: %v", err)
	}
}

func asRateLimit(err error, target **tasks.RateLimitError) bool {
	return errors.As(err, target)
}
