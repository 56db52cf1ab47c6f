package discussions

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
)

func TestDecideAccept(t *testing.T) {
	at := t0.Add(time.Hour)
	answer := func(id, author string) *Reply {
		return &Reply{ID: id, DiscussionID: "d1", AuthorID: author, AuthorName: author, Body: "b", CreatedAt: t0}
	}
	with := func(f func(d *Discussion)) *Discussion { d := openDiscussion(); f(d); return d }
	for _, tc := range []struct {
		name    string
		st      AcceptState
		caller  string
		want    error // nil: allowed
		changed bool
	}{
		{name: "the asker accepts", st: AcceptState{Discussion: openDiscussion(), Reply: answer("r1", "bob")}, caller: "alice",
			changed: true},
		{name: "no discussion", st: AcceptState{Reply: answer("r1", "bob")}, caller: "alice", want: ErrNotFound},
		{name: "a hidden discussion", st: AcceptState{Discussion: with(func(d *Discussion) { d.Hidden = true }),
			Reply: answer("r1", "bob")}, caller: "alice", want: ErrNotFound},
		{name: "someone else", st: AcceptState{Discussion: openDiscussion(), Reply: answer("r1", "bob")}, caller: "bob",
			want: ErrNotAsker},
		{name: "no such reply", st: AcceptState{Discussion: openDiscussion()}, caller: "alice", want: ErrReplyNotFound},
		{name: "another discussion's reply", st: AcceptState{Discussion: openDiscussion(),
			Reply: &Reply{ID: "r1", DiscussionID: "d2", AuthorID: "bob"}}, caller: "alice", want: ErrReplyNotFound},
		{name: "a hidden reply", st: AcceptState{Discussion: openDiscussion(),
			Reply: func() *Reply { r := answer("r1", "bob"); r.Hidden = true; return r }()}, caller: "alice", want: ErrReplyNotFound},
		{name: "the asker's own reply", st: AcceptState{Discussion: openDiscussion(), Reply: answer("r1", "alice")}, caller: "alice",
			want: ErrAcceptOwn},
		{name: "accepted already", st: AcceptState{Discussion: with(func(d *Discussion) { d.AcceptedReplyID = "r1" }),
			Reply: answer("r1", "bob")}, caller: "alice"},
		{name: "the mark moves", st: AcceptState{Discussion: with(func(d *Discussion) { d.AcceptedReplyID = "r0" }),
			Reply: answer("r1", "bob")}, caller: "alice", changed: true},
		{name: "a revoked asker", st: AcceptState{Caller: &agents.Agent{ID: "alice", DisabledAt: t0}, Discussion: openDiscussion(),
			Reply: answer("r1", "bob")}, caller: "alice", want: agents.ErrRevoked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before Discussion
			if tc.st.Discussion != nil {
				before = *tc.st.Discussion
			}
			if tc.st.Caller == nil {
				tc.st.Caller = &agents.Agent{ID: tc.caller}
			}
			out, err := DecideAccept(tc.st, Accept{DiscussionID: "d1", ReplyID: "r1", CallerID: tc.caller, At: at})
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.st.Discussion != nil && *tc.st.Discussion != before {
				t.Fatal("the decision changed its input")
			}
			if out.Changed != tc.changed || out.Discussion.AcceptedReplyID != "r1" {
				t.Fatalf("changed %v accepted %q, want changed %v and r1", out.Changed, out.Discussion.AcceptedReplyID, tc.changed)
			}
			if n := out.Notice; tc.changed && (n == nil || n.Kind != InboxAccepted || n.AgentID != "bob" || n.ReplyID != "r1" ||
				n.DiscussionID != "d1" || !n.CreatedAt.Equal(at) || n.ID != NoticeID(InboxAccepted, "r1", "bob", at) || n.TaskIDs == nil) {
				t.Fatalf("notice %+v", n)
			}
			if !tc.changed {
				if len(out.Events) != 0 || out.Notice != nil {
					t.Fatalf("events without a change: %+v", out.Events)
				}
				return
			}
			if len(out.Events) != 1 || out.Events[0].Kind != changelog.DiscussionChanged || out.Events[0].Ref != changelog.RefAccepted ||
				out.Events[0].Note != "r1" || out.Events[0].ID != "d1" || !out.Events[0].At.Equal(at) {
				t.Fatalf("events: %+v", out.Events)
			}
		})
	}
}

func TestHideAndShowReply(t *testing.T) {
	r := Reply{ID: "r1", DiscussionID: "d1", AuthorID: "bob", CreatedAt: t0.Add(time.Second)}
	other := &Reply{ID: "r2", DiscussionID: "d1", AuthorID: "carol", CreatedAt: t0.Add(2 * time.Second)}
	d := Answered(*openDiscussion(), &r)
	d.ReplyCount, d.AcceptedReplyID = 2, "r1"
	at := t0.Add(time.Minute)

	d1, r1 := HideReply(d, r, at, other)
	if !r1.Hidden || !r1.HiddenAt.Equal(at) || d1.HiddenReplies != 1 || d1.VisibleReplies() != 1 || d1.AcceptedReplyID != "" || !r1.Unaccepted {
		t.Fatalf("hidden: %+v %+v", d1, r1)
	}
	if d2, r2 := HideReply(d1, r1, at.Add(time.Minute), other); d2 != d1 || r2 != r1 {
		t.Fatal("hiding a hidden reply changed something")
	}
	// Unhidden, it gets its mark back.
	d3, r3 := ShowReply(d1, r1, other)
	if r3.Hidden || d3.HiddenReplies != 0 || d3.AcceptedReplyID != "r1" || r3.Unaccepted {
		t.Fatalf("shown: %+v %+v", d3, r3)
	}
	// Not when the asker accepted another meanwhile.
	d1.AcceptedReplyID = "r2"
	d4, r4 := ShowReply(d1, r1, other)
	if d4.AcceptedReplyID != "r2" || r4.Unaccepted {
		t.Fatalf("shown after another was accepted: %+v %+v", d4, r4)
	}
	if d5, r5 := ShowReply(d3, r3, other); d5 != d3 || r5 != r3 {
		t.Fatal("showing a public reply changed something")
	}
	hd := HideDiscussion(d, at)
	if !hd.Hidden || !hd.HiddenAt.Equal(at) || HideDiscussion(hd, at.Add(time.Hour)).HiddenAt != at {
		t.Fatalf("hidden discussion: %+v", hd)
	}
	if sd := ShowDiscussion(hd); sd.Hidden || !sd.HiddenAt.IsZero() {
		t.Fatalf("shown discussion: %+v", sd)
	}
}

// TestAnsweredByVisibleReplies: a discussion is answered at the time of
// its earliest visible qualifying reply, whatever order replies came,
// were hidden or shown in, and open when it has none.
func TestAnsweredByVisibleReplies(t *testing.T) {
	reply := func(id, author string, s int) Reply {
		return Reply{ID: id, DiscussionID: "d1", AuthorID: author, CreatedAt: t0.Add(time.Duration(s) * time.Second)}
	}
	bob, carol, own := reply("r1", "bob", 1), reply("r2", "carol", 2), reply("r0", "alice", 0)
	answered := func(r Reply) Discussion { return Answered(*openDiscussion(), &r) }
	open := *openDiscussion()
	hidden := func(r Reply) Reply { r.Hidden = true; return r }
	for _, tc := range []struct {
		name  string
		d     Discussion
		apply func(d Discussion) Discussion
		want  Status
		at    time.Time
	}{
		{"hiding the only answer opens it", answered(bob),
			func(d Discussion) Discussion { d, _ = HideReply(d, bob, t0, nil); return d }, StatusOpen, time.Time{}},
		{"hiding the first answer answers it by the next", answered(bob),
			func(d Discussion) Discussion { d, _ = HideReply(d, bob, t0, &carol); return d }, StatusAnswered, carol.CreatedAt},
		{"hiding a later answer changes nothing", answered(bob),
			func(d Discussion) Discussion { d, _ = HideReply(d, carol, t0, &bob); return d }, StatusAnswered, bob.CreatedAt},
		{"hiding the asker's own reply changes nothing", open,
			func(d Discussion) Discussion { d, _ = HideReply(d, own, t0, nil); return d }, StatusOpen, time.Time{}},
		{"showing the only answer answers it at its time", open,
			func(d Discussion) Discussion { d, _ = ShowReply(d, hidden(bob), nil); return d }, StatusAnswered, bob.CreatedAt},
		{"showing an earlier answer moves the time back", answered(carol),
			func(d Discussion) Discussion { d, _ = ShowReply(d, hidden(bob), &carol); return d }, StatusAnswered, bob.CreatedAt},
		{"showing a later answer keeps the time", answered(bob),
			func(d Discussion) Discussion { d, _ = ShowReply(d, hidden(carol), &bob); return d }, StatusAnswered, bob.CreatedAt},
		{"showing the asker's own reply answers nothing", open,
			func(d Discussion) Discussion { d, _ = ShowReply(d, hidden(own), nil); return d }, StatusOpen, time.Time{}},
		{"a later answer posted after an earlier one keeps the time", answered(bob),
			func(d Discussion) Discussion {
				p, _ := DecidePost(&d, time.Time{}, carol, Limits{})
				return p.Discussion
			}, StatusAnswered,
			bob.CreatedAt},
		{"an earlier answer committed after a later one moves the time back", answered(carol),
			func(d Discussion) Discussion { p, _ := DecidePost(&d, time.Time{}, bob, Limits{}); return p.Discussion }, StatusAnswered,
			bob.CreatedAt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.apply(tc.d)
			if got.Status != tc.want || !got.AnsweredAt.Equal(tc.at) {
				t.Fatalf("%s at %s, want %s at %s", got.Status, got.AnsweredAt, tc.want, tc.at)
			}
		})
	}
}
