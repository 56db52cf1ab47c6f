package trust

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
)

func TestReputationPoints(t *testing.T) {
	var r Reputation
	r.Apply("bob", []Move{{"bob", CompAccepted, 2}, {"bob", CompWorked, 3}, {"bob", CompUp, 4}, {"bob", CompDown, 5},
		{"bob", CompHidden, 1}, {"bob", CompAdjust, 7}, {"bob", CompAnswers, 9}, {"bob", CompQuestions, 2}, {"carol", CompUp, 100}})
	if want := int64(2*15 + 3*10 + 4*5 - 5*2 - 50 + 7); r.Points != want || r.Accepted != 2 || r.Answers != 9 || r.Questions != 2 {
		t.Fatalf("reputation %+v, want %d points", r, want)
	}
	var s Reputation
	for i, c := range Counted {
		s.Set(c, int64(i+1))
	}
	if s != (Reputation{Accepted: 1, Answers: 2, Questions: 3}) {
		t.Fatalf("set %+v", s)
	}
}

func TestAcceptMoves(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		want     []Move
	}{
		{"a first accept", "", "bob", []Move{{"bob", CompAccepted, 1}}},
		{"the mark moves", "bob", "carol", []Move{{"bob", CompAccepted, -1}, {"carol", CompAccepted, 1}}},
		{"between two replies of one author", "bob", "bob", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AcceptMoves(tc.old, tc.new); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("moves %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestContentMoves(t *testing.T) {
	at := t0.Add(time.Hour)
	tally := &Tally{Item: replyItem, AuthorID: "bob", Up: 3, Down: 1, Worked: 2, Failed: 4}
	accepted := disc(func(d *discussions.Discussion) { d.AcceptedReplyID = "r1" })
	hide := func(d *discussions.Discussion, r *discussions.Reply) (*discussions.Discussion, *discussions.Reply) {
		nd, nr := discussions.HideReply(*d, *r, at, nil)
		return &nd, &nr
	}
	show := func(d *discussions.Discussion, r *discussions.Reply) (*discussions.Discussion, *discussions.Reply) {
		nd, nr := discussions.ShowReply(*d, *r, nil)
		return &nd, &nr
	}
	hd, hr := hide(accepted, answer())
	hd2, hr2 := hide(disc(), answer())
	sd, sr := show(hd, hr)
	hiddenD := discussions.HideDiscussion(*disc(), at)
	for _, tc := range []struct {
		name  string
		d     *discussions.Discussion
		r     *discussions.Reply
		ad    *discussions.Discussion
		ar    *discussions.Reply
		tally *Tally
		want  []Move
	}{
		{"an accepted reply hidden", accepted, answer(), hd, hr, tally, []Move{{"bob", CompHidden, 1}, {"bob", CompAnswers, -1}, {"bob", CompUp, -3},
			{"bob", CompDown, -1}, {"bob", CompWorked, -2}, {"bob", CompAccepted, -1}}},
		{"a reply without signals hidden", disc(), answer(), hd2, hr2, nil, []Move{{"bob", CompHidden, 1}, {"bob", CompAnswers, -1}}},
		{"the asker's own reply hidden", disc(), answer(func(r *discussions.Reply) { r.AuthorID = "alice" }), hd2,
			func() *discussions.Reply { r := *hr2; r.AuthorID = "alice"; return &r }(), nil, []Move{{"alice", CompHidden, 1}}},
		{"shown again, with its mark", hd, hr, sd, sr, tally, []Move{{"bob", CompHidden, -1}, {"bob", CompAnswers, 1}, {"bob", CompUp, 3},
			{"bob", CompDown, 1}, {"bob", CompWorked, 2}, {"bob", CompAccepted, 1}}},
		{"a discussion hidden", disc(), nil, &hiddenD, nil, nil, []Move{{"alice", CompHidden, 1}, {"alice", CompQuestions, -1}}},
		{"a discussion shown", &hiddenD, nil, disc(), nil, nil, []Move{{"alice", CompHidden, -1}, {"alice", CompQuestions, 1}}},
		{"nothing changed", disc(), answer(), disc(), answer(), tally, nil},
		{"unchanged content", disc(), answer(), nil, nil, tally, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ContentMoves(tc.d, tc.r, tc.ad, tc.ar, tc.tally); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("moves %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecideReset(t *testing.T) {
	c := Reset{AgentID: "bob", Actor: moderation.Actor{Kind: moderation.ActorOperator, Name: "ops"}, Reason: "sock puppets", At: t0}
	if _, err := DecideReset(nil, false, Reputation{}, c); !errors.Is(err, agents.ErrNotFound) {
		t.Fatalf("unknown agent: %v", err)
	}
	none, err := DecideReset(nil, true, Reputation{Answers: 3}, c)
	if err != nil || none.Before != 0 || none.Moves != nil || none.Entry != nil || none.Events != nil {
		t.Fatalf("a reset of 0: %+v %v", none, err)
	}
	r := Reputation{Points: 20, Accepted: 1}
	out, err := DecideReset(nil, true, r, c)
	if err != nil || out.Before != 20 || !reflect.DeepEqual(out.Moves, []Move{{"bob", CompAdjust, -20}}) {
		t.Fatalf("reset: %+v %v", out, err)
	}
	r.Apply("bob", out.Moves)
	if r.Points != 0 || r.Accepted != 1 {
		t.Fatalf("after the reset: %+v", r)
	}
	if e := out.Entry; e == nil || e.Action != moderation.ActionResetReputation || e.ItemID != "bob" || e.Reason != "sock puppets" {
		t.Fatalf("entry %+v", e)
	}
	if len(out.Events) != 1 || out.Events[0].Kind != changelog.ReputationReset || out.Events[0].ID != "bob" {
		t.Fatalf("events %+v", out.Events)
	}
	// An agent moderator is refused once revoked, and acts while active.
	byAgent := c
	byAgent.Actor = moderation.Actor{Kind: moderation.ActorAgent, ID: "mia", Name: "mia"}
	for _, actor := range []*agents.Agent{nil, {ID: "mia", DisabledAt: t0}} {
		if out, err := DecideReset(actor, true, Reputation{Points: 20}, byAgent); !errors.Is(err, agents.ErrRevoked) || out.Entry != nil {
			t.Fatalf("a reset by revoked moderator %+v: %+v %v", actor, out, err)
		}
	}
	if out, err := DecideReset(&agents.Agent{ID: "mia"}, true, Reputation{Points: 20}, byAgent); err != nil || out.Before != 20 {
		t.Fatalf("a reset by an active moderator: %+v %v", out, err)
	}
}
