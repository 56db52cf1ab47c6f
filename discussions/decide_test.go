package discussions

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/ratelimit"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func openDiscussion() *Discussion {
	return &Discussion{ID: "d1", Title: "q", AuthorID: "alice", AuthorName: "alice", Status: StatusOpen, CreatedAt: t0}
}

func TestDecidePost(t *testing.T) {
	reply := func(author string) Reply {
		return Reply{ID: "r1", DiscussionID: "d1", AuthorID: author, AuthorName: author, Body: "b", CreatedAt: t0.Add(time.Minute)}
	}
	rate := ratelimit.PerMinute(2)
	for _, tc := range []struct {
		name       string
		d          *Discussion
		window     time.Time
		r          Reply
		lim        Limits
		want       error // nil: allowed
		qualifying bool
		status     Status
		window2    bool // a window to keep
	}{
		{name: "no discussion", d: nil, r: reply("bob"), want: ErrNotFound},
		{name: "a hidden discussion", d: func() *Discussion { d := openDiscussion(); d.Hidden = true; return d }(), r: reply("bob"),
			want: ErrNotFound},
		{name: "someone else answers", d: openDiscussion(), r: reply("bob"), qualifying: true, status: StatusAnswered},
		{name: "the author adds details", d: openDiscussion(), r: reply("alice"), status: StatusOpen},
		{name: "answered stays answered", d: func() *Discussion { d := openDiscussion(); d.Status = StatusAnswered; return d }(),
			r: reply("carol"), qualifying: true, status: StatusAnswered},
		{name: "at the reply bound", d: func() *Discussion { d := openDiscussion(); d.ReplyCount = 3; return d }(), r: reply("bob"),
			lim: Limits{MaxReplies: 3}, want: ErrTooManyReplies},
		{name: "below the reply bound", d: func() *Discussion { d := openDiscussion(); d.ReplyCount = 2; return d }(), r: reply("bob"),
			lim: Limits{MaxReplies: 3}, qualifying: true, status: StatusAnswered},
		{name: "under the rate", d: openDiscussion(), r: reply("bob"), lim: Limits{ReplyRate: rate}, qualifying: true,
			status: StatusAnswered, window2: true},
		{name: "over the rate", d: openDiscussion(), window: t0.Add(2 * time.Minute), r: reply("bob"), lim: Limits{ReplyRate: rate},
			want: ErrReplyRate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before Discussion
			if tc.d != nil {
				before = *tc.d
			}
			p, err := DecidePost(tc.d, tc.window, tc.r, tc.lim)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err %v, want %v", err, tc.want)
				}
				var ex *ratelimit.Exceeded
				if errors.Is(tc.want, ErrReplyRate) && (!errors.As(err, &ex) || ex.RetryAfter <= 0) {
					t.Fatalf("a rate refusal without its wait: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *tc.d != before {
				t.Fatal("the decision changed the discussion it was given")
			}
			if p.Qualifying != tc.qualifying || p.Discussion.Status != tc.status || p.Discussion.ReplyCount != before.ReplyCount+1 ||
				p.OldStatus != before.Status || (p.Window != nil) != tc.window2 {
				t.Fatalf("post: %+v", p)
			}
			if tc.status == StatusAnswered && before.Status == StatusOpen && !p.Discussion.AnsweredAt.Equal(tc.r.CreatedAt) {
				t.Fatalf("answeredAt %s", p.Discussion.AnsweredAt)
			}
		})
	}
}

func TestNotices(t *testing.T) {
	d := Discussion{ID: "d1", AuthorID: "c-alice"}
	r := Reply{ID: "01JD0000000000000000000001", DiscussionID: "d1", AuthorID: "e-eve", CreatedAt: t0}
	for _, tc := range []struct {
		name    string
		members []Member
		author  string
		want    []string
	}{
		{"the author, without a task of its own, in its place", []Member{{"b-bob", []string{"t1"}}, {"d-dan", []string{"t2"}}}, "e-eve",
			[]string{"b-bob", "c-alice", "d-dan"}},
		{"the author after every member", []Member{{"a-ann", []string{"t1"}}}, "e-eve", []string{"a-ann", "c-alice"}},
		{"the author as a member once", []Member{{"c-alice", []string{"t0"}}}, "e-eve", []string{"c-alice"}},
		{"never the replier", []Member{{"b-bob", []string{"t1"}}, {"e-eve", []string{"t9"}}}, "e-eve", []string{"b-bob", "c-alice"}},
		{"the author replying tells the others", []Member{{"b-bob", []string{"t1"}}, {"c-alice", []string{"t0"}}}, "c-alice",
			[]string{"b-bob"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.AuthorID = tc.author
			got := Notices(d, r, tc.members)
			var who []string
			for _, e := range got {
				who = append(who, e.AgentID)
				if e.ReplyID != r.ID || e.DiscussionID != "d1" || e.ID != InboxEntryID(r.ID, e.AgentID, r.CreatedAt) || e.TaskIDs == nil {
					t.Fatalf("entry %+v", e)
				}
			}
			if len(who) != len(tc.want) {
				t.Fatalf("notified %v, want %v", who, tc.want)
			}
			for i := range who {
				if who[i] != tc.want[i] {
					t.Fatalf("notified %v, want %v", who, tc.want)
				}
			}
		})
	}
}

func TestDecideAck(t *testing.T) {
	acked := InboxEntry{ID: "e2", AgentID: "alice", AckedAt: t0}
	found := map[string]InboxEntry{
		"e1": {ID: "e1", AgentID: "alice"},
		"e2": acked,
		"e3": {ID: "e3", AgentID: "bob"}, // never handed over for alice, but refused if it were
	}
	alice := &agents.Agent{ID: "alice"}
	out, err := DecideAck(alice, "alice", []string{"e1", "e2", "e1", "e3", "nope"}, found, t0.Add(time.Hour))
	if err != nil || len(out.Result.Acked) != 1 || out.Result.Acked[0] != "e1" || len(out.Result.AlreadyAcked) != 1 ||
		len(out.Result.NotFound) != 2 || len(out.Acked) != 1 || !out.Acked[0].AckedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("ack: %+v", out)
	}
	if found["e1"].AckedAt != (time.Time{}) {
		t.Fatal("the decision changed the entry it was given")
	}
	none, err := DecideAck(alice, "alice", []string{"x"}, nil, t0)
	if err != nil || len(none.Acked) != 0 || len(none.Result.NotFound) != 1 || none.Result.Acked == nil {
		t.Fatalf("ack of nothing: %+v", none)
	}
	for _, a := range []*agents.Agent{{ID: "alice", DisabledAt: t0}, nil} {
		if out, err := DecideAck(a, "alice", []string{"e1"}, found, t0); !errors.Is(err, agents.ErrRevoked) || len(out.Acked) != 0 {
			t.Fatalf("a revoked agent's ack: %+v %v", out, err)
		}
	}
}
