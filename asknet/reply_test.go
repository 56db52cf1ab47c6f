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

func TestDecideReply(t *testing.T) {
	d := &discussions.Discussion{ID: "D", AuthorID: "alice", Status: discussions.StatusOpen}
	task := func(id, owner string) tasks.Task {
		return tasks.Task{ID: id, ContextID: "ctx-" + id, OwnerID: owner, DiscussionID: "D", State: a2a.TaskStateWorking, StatusTime: t0}
	}
	working := []tasks.Task{task("T1", "alice"), task("T2", "bob"), task("T3", "carol")}
	members := []discussions.Member{{AgentID: "alice", TaskIDs: []string{"T1"}}, {AgentID: "bob", TaskIDs: []string{"T0", "T2"}},
		{AgentID: "carol", TaskIDs: []string{"T3"}}}
	configs := map[string][]push.Config{"T1": {{ID: "c1", URL: "https://a.example.com/"}}}
	reply := func(author string) discussions.Reply {
		return discussions.Reply{ID: "R", DiscussionID: "D", AuthorID: author, AuthorName: author, Body: "b", CreatedAt: t0.Add(time.Hour)}
	}
	st := ReplyState{Discussion: d, Working: working, Members: members, Configs: configs}
	for _, tc := range []struct {
		name      string
		st        ReplyState
		r         discussions.Reply
		lim       discussions.Limits
		want      error
		completed []string
		notified  []string
		events    []changelog.Kind
		author    string // "" an active author, "revoked" or "none"
	}{
		{name: "no discussion", st: ReplyState{}, r: reply("bob"), want: discussions.ErrNotFound},
		{name: "at the reply bound", st: func() ReplyState { s := st; dd := *d; dd.ReplyCount = 2; s.Discussion = &dd; return s }(),
			r: reply("bob"), lim: discussions.Limits{MaxReplies: 2}, want: discussions.ErrTooManyReplies},
		{name: "over the reply rate", st: func() ReplyState { s := st; s.Window = t0.Add(2 * time.Hour); return s }(),
			r: reply("bob"), lim: discussions.Limits{ReplyRate: ratelimit.PerMinute(1)}, want: discussions.ErrReplyRate},
		{name: "a qualifying reply completes all but the replier's own", st: st, r: reply("bob"),
			completed: []string{"T1", "T3"}, notified: []string{"alice", "carol"},
			events: []changelog.Kind{changelog.DiscussionReplied, changelog.TaskMoved, changelog.DeliveryDue, changelog.TaskMoved}},
		{name: "an outsider completes every one", st: st, r: reply("dan"),
			completed: []string{"T1", "T2", "T3"}, notified: []string{"alice", "bob", "carol"},
			events: []changelog.Kind{changelog.DiscussionReplied, changelog.TaskMoved, changelog.DeliveryDue, changelog.TaskMoved,
				changelog.TaskMoved}},
		{name: "the author's reply completes nothing", st: st, r: reply("alice"), notified: []string{"bob", "carol"},
			events: []changelog.Kind{changelog.DiscussionReplied}},
		{name: "a revoked author completes nothing", st: st, r: reply("bob"), author: "revoked", want: agents.ErrRevoked},
		{name: "no author", st: st, r: reply("bob"), author: "none", want: agents.ErrRevoked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			st.Author = asker(tc.author)
			out, err := DecideReply(st, tc.r, tc.lim)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Result.CompletedTaskIDs) != len(tc.completed) || len(out.Completed) != len(tc.completed) {
				t.Fatalf("completed %v, want %v", out.Result.CompletedTaskIDs, tc.completed)
			}
			for i, id := range tc.completed {
				c := out.Completed[i]
				if out.Result.CompletedTaskIDs[i] != id || c.ID != id || c.State != a2a.TaskStateCompleted ||
					!c.StatusTime.Equal(tc.r.CreatedAt) || len(c.Artifacts) != 1 || c.StatusMessage == nil {
					t.Fatalf("completion %d: %+v", i, c)
				}
			}
			if out.Result.Notified != len(tc.notified) || len(out.Inbox) != len(tc.notified) {
				t.Fatalf("notified %d, want %v", out.Result.Notified, tc.notified)
			}
			for i, who := range tc.notified {
				if out.Inbox[i].AgentID != who {
					t.Fatalf("inbox %d is %s's, want %s's", i, out.Inbox[i].AgentID, who)
				}
			}
			if !sameKinds(kinds(out.Events), tc.events) {
				t.Fatalf("events %v, want %v", kinds(out.Events), tc.events)
			}
			if q := out.Events[0].Note == changelog.NoteQualifying; q != out.Result.Qualifying {
				t.Fatalf("the reply event's note says qualifying=%v, the result %v", q, out.Result.Qualifying)
			}
			wantDeliveries := 0
			for _, id := range tc.completed {
				wantDeliveries += len(configs[id])
			}
			if len(out.Deliveries) != wantDeliveries {
				t.Fatalf("%d deliveries, want %d", len(out.Deliveries), wantDeliveries)
			}
			if working[0].State != a2a.TaskStateWorking || d.Status != discussions.StatusOpen {
				t.Fatal("the decision changed the state it was given")
			}
			qualifying := tc.r.AuthorID != d.AuthorID
			if out.Result.Qualifying != qualifying || (out.Post.Discussion.Status == discussions.StatusAnswered) != qualifying {
				t.Fatalf("qualifying %v, discussion %s", out.Result.Qualifying, out.Post.Discussion.Status)
			}
		})
	}
}

func TestCompletes(t *testing.T) {
	d := discussions.Discussion{ID: "d", AuthorID: "asker"}
	task := tasks.Task{ID: "t", OwnerID: "joiner", DiscussionID: "d"}
	for _, tc := range []struct {
		name string
		r    discussions.Reply
		want bool
	}{
		{"someone else's reply", discussions.Reply{DiscussionID: "d", AuthorID: "bob"}, true},
		{"the asker's own", discussions.Reply{DiscussionID: "d", AuthorID: "asker"}, false},
		{"the task's owner's", discussions.Reply{DiscussionID: "d", AuthorID: "joiner"}, false},
		{"on another discussion", discussions.Reply{DiscussionID: "e", AuthorID: "bob"}, false},
	} {
		if got := Completes(d, task, tc.r); got != tc.want {
			t.Errorf("%s: Completes = %v, want %v", tc.name, got, tc.want)
		}
	}
}
