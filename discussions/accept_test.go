package discussions

import (
	"errors"
	"testing"
	"time"

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
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before Discussion
			if tc.st.Discussion != nil {
				before = *tc.st.Discussion
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
	d := *openDiscussion()
	d.ReplyCount, d.AcceptedReplyID = 2, "r1"
	r := Reply{ID: "r1", DiscussionID: "d1", AuthorID: "bob"}
	at := t0.Add(time.Minute)

	d1, r1 := HideReply(d, r, at)
	if !r1.Hidden || !r1.HiddenAt.Equal(at) || d1.HiddenReplies != 1 || d1.VisibleReplies() != 1 || d1.AcceptedReplyID != "" || !r1.Unaccepted {
		t.Fatalf("hidden: %+v %+v", d1, r1)
	}
	if d2, r2 := HideReply(d1, r1, at.Add(time.Minute)); d2 != d1 || r2 != r1 {
		t.Fatal("hiding a hidden reply changed something")
	}
	// Unhidden, it gets its mark back.
	d3, r3 := ShowReply(d1, r1)
	if r3.Hidden || d3.HiddenReplies != 0 || d3.AcceptedReplyID != "r1" || r3.Unaccepted {
		t.Fatalf("shown: %+v %+v", d3, r3)
	}
	// Not when the asker accepted another meanwhile.
	d1.AcceptedReplyID = "r2"
	d4, r4 := ShowReply(d1, r1)
	if d4.AcceptedReplyID != "r2" || r4.Unaccepted {
		t.Fatalf("shown after another was accepted: %+v %+v", d4, r4)
	}
	if d5, r5 := ShowReply(d3, r3); d5 != d3 || r5 != r3 {
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
