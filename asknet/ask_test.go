package asknet

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func newAsk(join string) tasks.CreateAsk {
	text := "how?"
	return tasks.NewAsk(tasks.AskInput{
		Asker:            tasks.Asker{ID: "01JD00000000000000000000AA", Name: "alice"},
		Message:          a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
		Question:         text,
		JoinDiscussionID: join,
	}, t0, 0)
}

// asker is the agent of a case: active (""), "revoked", or "none".
func asker(kind string) *agents.Agent {
	switch kind {
	case "revoked":
		return &agents.Agent{ID: "01JD00000000000000000000AA", DisabledAt: t0.Add(-time.Second)}
	case "none":
		return nil
	}
	return &agents.Agent{ID: "01JD00000000000000000000AA"}
}

func kinds(evs []changelog.Event) []changelog.Kind {
	var out []changelog.Kind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

func sameKinds(a, b []changelog.Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecideAsk(t *testing.T) {
	open := &discussions.Discussion{ID: "01JD00000000000000000000DD", Status: discussions.StatusOpen}
	answered := &discussions.Discussion{ID: "01JD00000000000000000000DD", Status: discussions.StatusAnswered}
	first := tasks.Task{ID: "first"}
	withRate := func(c tasks.CreateAsk) tasks.CreateAsk { c.AskRate = ratelimit.PerMinute(1); return c }
	withMax := func(c tasks.CreateAsk, n int) tasks.CreateAsk { c.MaxOpen = n; return c }
	withPush := func(c tasks.CreateAsk) tasks.CreateAsk { c.Push = &push.Config{ID: "c1"}; return c }
	for _, tc := range []struct {
		name   string
		st     AskState
		c      tasks.CreateAsk
		want   error // nil: allowed
		retry  bool
		events []changelog.Kind
		window bool
		asker  string // "" an active asker, "revoked" or "none"
	}{
		{name: "opens a discussion", c: newAsk(""), events: []changelog.Kind{changelog.TaskCreated, changelog.DiscussionOpened}},
		{name: "joins an open one", st: AskState{Join: open}, c: newAsk(open.ID), events: []changelog.Kind{changelog.TaskCreated}},
		{name: "a retry is answered with the first task", st: AskState{Retry: &first, Open: 9}, c: withMax(withRate(newAsk("")), 1),
			retry: true},
		{name: "joins none", c: newAsk(open.ID), want: discussions.ErrNotFound},
		{name: "joins an answered one", st: AskState{Join: answered}, c: newAsk(open.ID), want: discussions.ErrAnswered},
		{name: "under the rate", c: withRate(newAsk("")), window: true,
			events: []changelog.Kind{changelog.TaskCreated, changelog.DiscussionOpened}},
		{name: "over the rate", st: AskState{Window: t0.Add(time.Minute)}, c: withRate(newAsk("")), want: tasks.ErrAskRate},
		{name: "the rate comes before the join", st: AskState{Window: t0.Add(time.Minute)}, c: withRate(newAsk(open.ID)),
			want: tasks.ErrAskRate},
		{name: "under the open-task bound", st: AskState{Open: 2}, c: withMax(newAsk(""), 3),
			events: []changelog.Kind{changelog.TaskCreated, changelog.DiscussionOpened}},
		{name: "at the open-task bound", st: AskState{Open: 3}, c: withMax(newAsk(""), 3), want: tasks.ErrTooManyOpen},
		{name: "with a push config", c: withPush(newAsk("")), events: []changelog.Kind{changelog.TaskCreated, changelog.DiscussionOpened}},
		{name: "a revoked asker", c: newAsk(""), asker: "revoked", want: agents.ErrRevoked},
		{name: "a revoked asker's retry", st: AskState{Retry: &first}, c: newAsk(""), asker: "revoked", want: agents.ErrRevoked},
		{name: "a revoked asker's join", st: AskState{Join: open}, c: newAsk(open.ID), asker: "revoked", want: agents.ErrRevoked},
		{name: "no asker", c: newAsk(""), asker: "none", want: agents.ErrRevoked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			st.Asker = asker(tc.asker)
			out, err := DecideAsk(st, tc.c, t0)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err %v, want %v", err, tc.want)
				}
				var ex *ratelimit.Exceeded
				if (errors.Is(tc.want, tasks.ErrAskRate) || errors.Is(tc.want, tasks.ErrTooManyOpen)) &&
					(!errors.As(err, &ex) || ex.RetryAfter <= 0 || ex.Msg == "") {
					t.Fatalf("a limit's refusal without its wait and words: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Retry != tc.retry {
				t.Fatalf("retry %v", out.Retry)
			}
			if tc.retry {
				if out.Task.ID != first.ID || len(out.Events) != 0 || out.Window != nil || out.Discussion != nil {
					t.Fatalf("a retry has effects: %+v", out)
				}
				return
			}
			if out.Task.ID != tc.c.Task.ID || out.Task.State != a2a.TaskStateWorking || !sameKinds(kinds(out.Events), tc.events) ||
				(out.Window != nil) != tc.window || (out.Discussion != nil) != (tc.c.JoinDiscussionID == "") ||
				(out.Push != nil) != (tc.c.Push != nil) {
				t.Fatalf("out %+v", out)
			}
			if e := out.Events[0]; e.ID != out.Task.ID || e.Ref != out.Task.DiscussionID || e.Owner != out.Task.OwnerID {
				t.Fatalf("task.created %+v", e)
			}
		})
	}
}
