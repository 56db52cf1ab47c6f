package trust

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/ratelimit"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func disc(f ...func(*discussions.Discussion)) *discussions.Discussion {
	d := &discussions.Discussion{ID: "d1", Title: "q", AuthorID: "alice", Status: discussions.StatusAnswered, CreatedAt: t0}
	for _, fn := range f {
		fn(d)
	}
	return d
}

func answer(f ...func(*discussions.Reply)) *discussions.Reply {
	r := &discussions.Reply{ID: "r1", DiscussionID: "d1", AuthorID: "bob", AuthorName: "bob", Body: "b", CreatedAt: t0}
	for _, fn := range f {
		fn(r)
	}
	return r
}

var (
	// active is a voter that may act; revoked one whose revoke committed
	// while its request was on its way.
	active     = &agents.Agent{ID: "carol"}
	revoked    = &agents.Agent{ID: "carol", DisabledAt: t0}
	replyItem  = ReplyItem("d1", "r1")
	recordItem = RecordItem("rec-1")
	onReply    = Target{Discussion: disc(), Reply: answer()}
)

// refusals every signal command shares, in their order.
func refusalCases() []struct {
	name   string
	item   Item
	target Target
	agent  string
	want   error
} {
	return []struct {
		name   string
		item   Item
		target Target
		agent  string
		want   error
	}{
		{"no discussion", replyItem, Target{Reply: answer()}, "carol", discussions.ErrNotFound},
		{"a hidden discussion", replyItem, Target{Discussion: disc(func(d *discussions.Discussion) { d.Hidden = true }), Reply: answer()},
			"carol", discussions.ErrNotFound},
		{"another discussion's id", ReplyItem("d2", "r1"), onReply, "carol", discussions.ErrNotFound},
		{"no reply", replyItem, Target{Discussion: disc()}, "carol", discussions.ErrReplyNotFound},
		{"a hidden reply", replyItem, Target{Discussion: disc(), Reply: answer(func(r *discussions.Reply) { r.Hidden = true })},
			"carol", discussions.ErrReplyNotFound},
		{"a reply of another discussion", replyItem, Target{Discussion: disc(), Reply: answer(func(r *discussions.Reply) {
			r.DiscussionID = "d2"
		})}, "carol", discussions.ErrReplyNotFound},
		{"no record", recordItem, Target{}, "carol", knowledge.ErrNotFound},
		{"one's own reply", replyItem, onReply, "bob", ErrOwnContent},
	}
}

func TestDecideVoteRefusals(t *testing.T) {
	for _, tc := range refusalCases() {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecideVote(VoteState{Voter: active, Target: tc.target}, VoteCommand{Item: tc.item, AgentID: tc.agent, Value: 1, At: t0},
				Limits{Rate: ratelimit.PerMinute(1)})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if !reflect.DeepEqual(out, VoteOutcome{}) {
				t.Fatalf("a refusal with effects: %+v", out)
			}
		})
	}
}

func TestDecideVote(t *testing.T) {
	at := t0.Add(time.Hour)
	day := at.Format(time.DateOnly)
	up := &Vote{Item: replyItem, AgentID: "carol", Value: 1, At: t0}
	tallyUp := &Tally{Item: replyItem, AuthorID: "bob", Up: 1, Weight: weightAt(VoteWeight, t0), NoticeDay: day}
	rate := Limits{Rate: ratelimit.PerMinute(2)}
	for _, tc := range []struct {
		name     string
		st       VoteState
		item     Item
		value    int
		lim      Limits
		changed  bool
		up, down int
		moves    []Move
		notice   bool
		keep     bool // a vote to keep (else none, or the standing one deleted)
	}{
		{name: "a first up vote", st: VoteState{Voter: active, Target: onReply}, item: replyItem, value: 1, changed: true, up: 1,
			moves: []Move{{"bob", CompUp, 1}}, notice: true, keep: true},
		{name: "a first down vote", st: VoteState{Voter: active, Target: onReply}, item: replyItem, value: -1, changed: true, down: 1,
			moves: []Move{{"bob", CompDown, 1}}, notice: true, keep: true},
		{name: "the same vote again", st: VoteState{Voter: active, Target: onReply, Tally: tallyUp, Standing: up}, item: replyItem, value: 1, up: 1},
		{name: "the same vote again, over the rate", st: VoteState{Voter: active, Target: onReply, Tally: tallyUp, Standing: up, Window: at.Add(time.Hour)},
			item: replyItem, value: 1, lim: rate, up: 1},
		{name: "a withdrawal of nothing", st: VoteState{Voter: active, Target: onReply}, item: replyItem, value: 0},
		{name: "up replaced by down", st: VoteState{Voter: active, Target: onReply, Tally: tallyUp, Standing: up}, item: replyItem, value: -1,
			changed: true, down: 1, moves: []Move{{"bob", CompUp, -1}, {"bob", CompDown, 1}}, keep: true},
		{name: "a withdrawal", st: VoteState{Voter: active, Target: onReply, Tally: tallyUp, Standing: up}, item: replyItem, value: 0, changed: true,
			moves: []Move{{"bob", CompUp, -1}}},
		{name: "yesterday's notice", st: VoteState{Voter: active, Target: onReply, Tally: &Tally{Item: replyItem, AuthorID: "bob", Down: 1,
			Weight: weightAt(-VoteWeight, t0), NoticeDay: "2026-12-02"}}, item: replyItem, value: 1, changed: true, up: 1, down: 1,
			moves: []Move{{"bob", CompUp, 1}}, notice: true, keep: true},
		{name: "a record", st: VoteState{Voter: active, Target: Target{Record: true}}, item: recordItem, value: 1, changed: true, up: 1, keep: true},
		{name: "under the rate", st: VoteState{Voter: active, Target: onReply}, item: replyItem, value: 1, lim: rate, changed: true, up: 1,
			moves: []Move{{"bob", CompUp, 1}}, notice: true, keep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before Tally
			if tc.st.Tally != nil {
				before = *tc.st.Tally
			}
			out, err := DecideVote(tc.st, VoteCommand{Item: tc.item, AgentID: "carol", Value: tc.value, At: at}, tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			if tc.st.Tally != nil && *tc.st.Tally != before {
				t.Fatal("the decision changed the tally it was given")
			}
			tl := out.Result.Tally
			if out.Result.Changed != tc.changed || tl.Up != tc.up || tl.Down != tc.down {
				t.Fatalf("result %+v", out.Result)
			}
			if !tc.changed {
				if out.Vote != nil || len(out.Events) != 0 || len(out.Moves) != 0 || out.Window != nil || out.Notice != nil {
					t.Fatalf("effects without a change: %+v", out)
				}
				return
			}
			if out.Tally != tl || (out.Vote != nil) != tc.keep || (out.Notice != nil) != tc.notice || !reflect.DeepEqual(out.Moves, tc.moves) {
				t.Fatalf("outcome %+v", out)
			}
			if tc.keep && (out.Vote.Value != tc.value || out.Vote.AgentID != "carol" || !out.Vote.At.Equal(at)) {
				t.Fatalf("vote %+v", out.Vote)
			}
			if (out.Window != nil) != tc.lim.Rate.Enabled() {
				t.Fatalf("window %v", out.Window)
			}
			if n := out.Notice; n != nil && (n.AgentID != "bob" || n.Kind != discussions.InboxVoted || n.ReplyID != "r1" ||
				n.DiscussionID != "d1" || tl.NoticeDay != day || n.TaskIDs == nil) {
				t.Fatalf("notice %+v, tally's day %q", n, tl.NoticeDay)
			}
			want := weightAt(voteWeight(tc.up-tc.down), at)
			if tc.name == "yesterday's notice" {
				want = weightAt(-VoteWeight, t0) + weightAt(VoteWeight, at)
			}
			if math.Abs(tl.Weight-want) > 1e-12 {
				t.Fatalf("weight %v, want %v", tl.Weight, want)
			}
			e := out.Events
			if len(e) != 1 || e[0].Kind != changelog.ItemVoted || e[0].ID != tc.item.ID || e[0].Owner != "carol" ||
				e[0].Ref != tc.item.DiscussionID || e[0].Note != tl.AuthorID || !e[0].At.Equal(at) {
				t.Fatalf("events %+v", e)
			}
		})
	}
}

func TestDecideVoteRate(t *testing.T) {
	lim := Limits{Rate: ratelimit.PerMinute(2)}
	st := VoteState{Voter: active, Target: onReply}
	window := time.Time{}
	for i := range 3 {
		st.Window = window
		out, err := DecideVote(st, VoteCommand{Item: replyItem, AgentID: "carol", Value: 1 - 2*(i%2), At: t0}, lim)
		if i == 2 {
			var ex *ratelimit.Exceeded
			if !errors.Is(err, ErrVoteRate) || !errors.As(err, &ex) || ex.RetryAfter <= 0 {
				t.Fatalf("third vote in a minute: %v", err)
			}
			return
		}
		if err != nil || out.Window == nil {
			t.Fatalf("vote %d: %v %+v", i, err, out)
		}
		window = *out.Window
		st.Standing, st.Tally = out.Vote, &out.Tally
	}
}

func TestDecideVerifyRefusals(t *testing.T) {
	for _, tc := range refusalCases() {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecideVerify(VerifyState{Voter: active, Target: tc.target}, VerifyCommand{Item: tc.item, AgentID: tc.agent, Outcome: Worked, At: t0},
				Limits{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if !reflect.DeepEqual(out, VerifyOutcome{}) {
				t.Fatalf("a refusal with effects: %+v", out)
			}
		})
	}
}

func TestDecideVerify(t *testing.T) {
	at := t0.Add(time.Hour)
	mine := &Verification{Item: replyItem, AgentID: "carol", Outcome: Worked, Environment: "linux", At: t0}
	dan := Verification{Item: replyItem, AgentID: "dan", Outcome: Worked, At: t0.Add(-time.Hour)}
	tally := &Tally{Item: replyItem, AuthorID: "bob", Worked: 2, LastWorkedAt: t0,
		Weight: weightAt(WorkedWeight, t0) + weightAt(WorkedWeight, dan.At)}
	for _, tc := range []struct {
		name           string
		st             VoteState
		vst            VerifyState
		outcome        Outcome
		env            string
		at             time.Time
		changed        bool
		worked, failed int
		last           time.Time
		moves          []Move
	}{
		{name: "a first worked", vst: VerifyState{Voter: active, Target: onReply}, outcome: Worked, at: at, changed: true, worked: 1, last: at,
			moves: []Move{{"bob", CompWorked, 1}}},
		{name: "a first failed", vst: VerifyState{Voter: active, Target: onReply}, outcome: Failed, env: "windows", at: at, changed: true, failed: 1},
		{name: "worked replaced by failed: the other's time stands", vst: VerifyState{Voter: active, Target: onReply, Tally: tally, Standing: mine,
			LatestWorked: []Verification{*mine, dan}}, outcome: Failed, at: at, changed: true, worked: 1, failed: 1, last: dan.At,
			moves: []Move{{"bob", CompWorked, -1}}},
		{name: "the same report again", vst: VerifyState{Voter: active, Target: onReply, Tally: tally, Standing: mine, LatestWorked: []Verification{*mine, dan}},
			outcome: Worked, env: "linux", at: at, worked: 2, last: t0},
		{name: "the same report a day later renews it", vst: VerifyState{Voter: active, Target: onReply, Tally: tally, Standing: mine,
			LatestWorked: []Verification{*mine, dan}}, outcome: Worked, env: "linux", at: t0.Add(RepeatWindow), changed: true, worked: 2,
			last: t0.Add(RepeatWindow)},
		{name: "another environment", vst: VerifyState{Voter: active, Target: onReply, Tally: tally, Standing: mine, LatestWorked: []Verification{*mine, dan}},
			outcome: Worked, env: "macos", at: at, changed: true, worked: 2, last: at},
		{name: "a record", vst: VerifyState{Voter: active, Target: Target{Record: true}}, outcome: Worked, at: at, changed: true, worked: 1, last: at},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item := replyItem
			if tc.vst.Target.Record {
				item = recordItem
			}
			out, err := DecideVerify(tc.vst, VerifyCommand{Item: item, AgentID: "carol", AgentName: "Carol", Outcome: tc.outcome,
				Environment: tc.env, At: tc.at}, Limits{Rate: ratelimit.PerMinute(5)})
			if err != nil {
				t.Fatal(err)
			}
			tl := out.Result.Tally
			if out.Result.Changed != tc.changed || tl.Worked != tc.worked || tl.Failed != tc.failed || !tl.LastWorkedAt.Equal(tc.last) {
				t.Fatalf("result %+v", out.Result)
			}
			if !tc.changed {
				if len(out.Events) != 0 || out.Window != nil || out.Result.Verification != *tc.vst.Standing {
					t.Fatalf("effects without a change: %+v", out)
				}
				return
			}
			if !reflect.DeepEqual(out.Moves, tc.moves) || out.Window == nil || out.Verification.Outcome != tc.outcome ||
				!out.Verification.At.Equal(tc.at) || out.Verification.Environment != tc.env || out.Tally != tl {
				t.Fatalf("outcome %+v", out)
			}
			e := out.Events
			if len(e) != 1 || e[0].Kind != changelog.ItemVerified || e[0].Note != tl.AuthorID {
				t.Fatalf("events %+v", e)
			}
		})
	}
}

// TestTrustRecency: a "worked" from last month outweighs one from two
// years ago, and the order of two items does not depend on when it is
// read.
func TestTrustRecency(t *testing.T) {
	now := t0
	verify := func(at time.Time) Tally {
		out, err := DecideVerify(VerifyState{Voter: active, Target: Target{Record: true}},
			VerifyCommand{Item: recordItem, AgentID: "a", Outcome: Worked, At: at}, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Tally
	}
	recent, old := verify(now.AddDate(0, -1, 0)), verify(now.AddDate(-2, 0, 0))
	if r, o := recent.Trust(now), old.Trust(now); r <= o || math.Abs(r-0.944) > 0.002 || math.Abs(o-0.25) > 0.002 {
		t.Fatalf("trust of last month's worked %v, of two years ago %v", r, o)
	}
	if !(recent.Weight > old.Weight) {
		t.Fatal("the weights do not rank the recent report first")
	}
	// Ten fresh up votes are worth one fresh "worked".
	var votes Tally
	for i := range 10 {
		votes.Weight += weightAt(voteWeight(1), now)
		_ = i
	}
	if w := verify(now); math.Abs(votes.Trust(now)-w.Trust(now)) > 1e-9 {
		t.Fatalf("ten up votes %v, one worked %v", votes.Trust(now), w.Trust(now))
	}
	if got := (Tally{}).Trust(now); got != 0 {
		t.Fatalf("no signal has trust %v", got)
	}
}

func TestValidate(t *testing.T) {
	for _, v := range []int{-1, 0, 1} {
		if err := ValidateValue(v); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []int{2, -2, 100} {
		if err := ValidateValue(v); err == nil {
			t.Fatalf("value %d allowed", v)
		}
	}
	if _, err := ParseOutcome("works"); err == nil {
		t.Fatal("outcome works allowed")
	}
	if err := ValidateReport("linux\nmore", ""); err == nil {
		t.Fatal("a two-line environment allowed")
	}
	if err := (Item{Kind: ItemRecord, ID: string(make([]byte, MaxIDLen+1))}).Validate(); err == nil {
		t.Fatal("an id past the bound allowed")
	}
}

// TestRevokedVoter: a voter revoked (or gone) by the time the command is
// decided is refused with agents.ErrRevoked before anything else, by a
// vote and a verification alike, and nothing is written.
func TestRevokedVoter(t *testing.T) {
	for _, voter := range []*agents.Agent{revoked, nil} {
		vo, err := DecideVote(VoteState{Voter: voter, Target: onReply}, VoteCommand{Item: replyItem, AgentID: "carol", Value: 1, At: t0}, Limits{})
		if !errors.Is(err, agents.ErrRevoked) || vo.Result.Changed || vo.Vote != nil || vo.Events != nil {
			t.Fatalf("a vote by %+v: %+v %v", voter, vo, err)
		}
		ve, err := DecideVerify(VerifyState{Voter: voter, Target: onReply},
			VerifyCommand{Item: replyItem, AgentID: "carol", Outcome: Worked, At: t0}, Limits{})
		if !errors.Is(err, agents.ErrRevoked) || ve.Result.Changed || ve.Events != nil {
			t.Fatalf("a verification by %+v: %+v %v", voter, ve, err)
		}
	}
}
