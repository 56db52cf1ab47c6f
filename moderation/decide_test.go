package moderation

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func disc(f ...func(d *discussions.Discussion)) *discussions.Discussion {
	d := &discussions.Discussion{ID: "d1", Title: "q", AuthorID: "alice", AuthorName: "alice",
		Status: discussions.StatusAnswered, CreatedAt: t0, ReplyCount: 2, AcceptedReplyID: "r1"}
	for _, fn := range f {
		fn(d)
	}
	return d
}

func reply(f ...func(r *discussions.Reply)) *discussions.Reply {
	r := &discussions.Reply{ID: "r1", DiscussionID: "d1", AuthorID: "bob", AuthorName: "bob", Body: "b", CreatedAt: t0}
	for _, fn := range f {
		fn(r)
	}
	return r
}

func hiddenD(d *discussions.Discussion) { d.Hidden, d.HiddenAt = true, t0 }
func hiddenR(r *discussions.Reply)      { r.Hidden, r.HiddenAt = true, t0 }

var (
	onDisc  = Target{Kind: KindDiscussion, ID: "d1"}
	onReply = Target{Kind: KindReply, ID: "r1", DiscussionID: "d1"}
)

// decideFlag is DecideFlag by an active agent, the flagger, unless st
// names one.
func decideFlag(st FlagState, c FlagCommand, p Policy) (FlagOutcome, error) {
	if st.Agent == nil {
		st.Agent = &agents.Agent{ID: c.AgentID}
	}
	return DecideFlag(st, c, p)
}

// TestDecideRevoked: an agent revoked since its request was
// authenticated flags nothing, and moderates nothing from the web.
func TestDecideRevoked(t *testing.T) {
	revoked := &agents.Agent{ID: "carol", DisabledAt: t0.Add(-time.Second)}
	out, err := DecideFlag(FlagState{Agent: revoked, Discussion: disc(), Reply: reply()},
		FlagCommand{Target: onReply, AgentID: "carol", Reason: ReasonSpam, At: t0}, Policy{HideThreshold: 1})
	if !errors.Is(err, agents.ErrRevoked) || out.Result.Hidden || len(out.Events) != 0 {
		t.Fatalf("a revoked agent's flag: %+v %v", out, err)
	}
	c := Command{Action: ActionHide, Target: onReply, Actor: Actor{Kind: ActorAgent, ID: "carol", Name: "carol"}, Reason: "spam", At: t0}
	if mo, err := DecideModerate(State{Actor: revoked, Discussion: disc(), Reply: reply()}, c); !errors.Is(err, agents.ErrRevoked) ||
		mo.Result.Changed {
		t.Fatalf("a revoked moderator's hide: %+v %v", mo, err)
	}
	if mo, err := DecideModerate(State{Actor: &agents.Agent{ID: "carol"}, Discussion: disc(), Reply: reply()}, c); err != nil ||
		!mo.Result.Changed {
		t.Fatalf("an active moderator's hide: %+v %v", mo, err)
	}
}

func TestDecideFlagRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   FlagState
		t    Target
		by   string
		want error
	}{
		{"no discussion", FlagState{}, onDisc, "carol", discussions.ErrNotFound},
		{"a hidden discussion", FlagState{Discussion: disc(hiddenD)}, onDisc, "carol", discussions.ErrNotFound},
		{"a reply on no discussion", FlagState{Reply: reply()}, onReply, "carol", discussions.ErrNotFound},
		{"a reply on a hidden discussion", FlagState{Discussion: disc(hiddenD), Reply: reply()}, onReply, "carol", discussions.ErrNotFound},
		{"no such reply", FlagState{Discussion: disc()}, onReply, "carol", discussions.ErrReplyNotFound},
		{"a hidden reply", FlagState{Discussion: disc(), Reply: reply(hiddenR)}, onReply, "carol", discussions.ErrReplyNotFound},
		{"another discussion's reply", FlagState{Discussion: disc(), Reply: reply(func(r *discussions.Reply) { r.DiscussionID = "d2" })},
			onReply, "carol", discussions.ErrReplyNotFound},
		{"one's own question", FlagState{Discussion: disc()}, onDisc, "alice", ErrOwnContent},
		{"one's own reply", FlagState{Discussion: disc(), Reply: reply()}, onReply, "bob", ErrOwnContent},
		{"over the rate", FlagState{Discussion: disc(), Window: t0.Add(time.Hour)}, onDisc, "carol", ErrFlagRate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decideFlag(tc.st, FlagCommand{Target: tc.t, AgentID: tc.by, Reason: ReasonSpam, At: t0},
				Policy{HideThreshold: 3, Rate: ratelimit.PerMinute(2)})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			var ex *ratelimit.Exceeded
			if tc.want == ErrFlagRate && (!errors.As(err, &ex) || ex.RetryAfter <= 0) {
				t.Fatalf("a rate refusal without its wait: %v", err)
			}
		})
	}
}

func TestDecideFlagAlreadyFlagged(t *testing.T) {
	out, err := decideFlag(FlagState{Discussion: disc(), Flagged: true, Window: t0.Add(time.Hour)},
		FlagCommand{Target: onDisc, AgentID: "carol", Reason: ReasonSpam, At: t0}, Policy{HideThreshold: 1, Rate: ratelimit.PerMinute(1)})
	if err != nil {
		t.Fatal(err)
	}
	// Answered before the rate: a repeat spends nothing and writes nothing.
	if !out.Result.AlreadyFlagged || out.Result.Hidden || out.Window != nil || len(out.Entries) != 0 || len(out.Events) != 0 ||
		out.Content != (Content{}) {
		t.Fatalf("outcome: %+v", out)
	}
}

// TestDecideFlagThreshold flags a reply by three agents, one at a time,
// feeding each outcome's item to the next decision: the third hides it,
// once, and the accepted answer loses its mark.
func TestDecideFlagThreshold(t *testing.T) {
	p := Policy{HideThreshold: 3, Rate: ratelimit.PerMinute(5)}
	d, r := disc(), reply()
	var item *Item
	reasons := []Reason{ReasonSpam, ReasonWrong, ReasonSpam}
	for i, who := range []string{"carol", "dave", "erin"} {
		at := t0.Add(time.Duration(i) * time.Minute)
		out, err := decideFlag(FlagState{Discussion: d, Reply: r, Item: item},
			FlagCommand{Target: onReply, AgentID: who, AgentName: who, Reason: reasons[i], Note: "n", At: at}, p)
		if err != nil {
			t.Fatalf("flag %d: %v", i, err)
		}
		it := out.Item
		item = &it
		if out.Flag.AgentID != who || out.Flag.Reason != reasons[i] || out.Flag.Round != 0 || out.Window == nil {
			t.Fatalf("flag %d: %+v", i, out.Flag)
		}
		if it.Flags != i+1 || it.ID != "r1" || it.Kind != KindReply || it.DiscussionID != "d1" || it.AuthorID != "bob" ||
			!it.FirstFlagAt.Equal(t0) || !it.LastFlagAt.Equal(at) || !it.Queued {
			t.Fatalf("item after flag %d: %+v", i, it)
		}
		if out.Entries[0].Action != ActionFlag || out.Entries[0].Actor.ID != who || out.Entries[0].Reason != string(reasons[i]) ||
			out.Entries[0].Note != "n" || out.Events[0].Kind != changelog.ItemFlagged || out.Events[0].Note != string(reasons[i]) {
			t.Fatalf("flag %d: entries %+v events %+v", i, out.Entries, out.Events)
		}
		if i < 2 {
			if out.Result.Hidden || it.Hidden != NotHidden || out.Content != (Content{}) || len(out.Entries) != 1 || len(out.Events) != 1 {
				t.Fatalf("flag %d hid: %+v", i, out)
			}
			continue
		}
		if !out.Result.Hidden || it.Hidden != HiddenByFlags || !it.HiddenAt.Equal(at) {
			t.Fatalf("the third flag did not hide: %+v", out)
		}
		if out.Content.Reply == nil || !out.Content.Reply.Hidden || !out.Content.Reply.Unaccepted ||
			out.Content.Discussion == nil || out.Content.Discussion.HiddenReplies != 1 || out.Content.Discussion.AcceptedReplyID != "" {
			t.Fatalf("content after the hide: %+v %+v", out.Content.Discussion, out.Content.Reply)
		}
		if len(out.Entries) != 2 || out.Entries[1].Action != ActionHide || out.Entries[1].Actor.Kind != ActorFlags ||
			out.Entries[1].Reason != "3 flags: spam 2, wrong 1" || out.Entries[0].ID >= out.Entries[1].ID {
			t.Fatalf("entries: %+v", out.Entries)
		}
		// Bob's was the discussion's only answer: hidden, it leaves the
		// discussion open again, and an event says so.
		if out.Content.Discussion.Status != discussions.StatusOpen || !out.Content.Discussion.AnsweredAt.IsZero() {
			t.Fatalf("the discussion after its only answer was hidden: %+v", out.Content.Discussion)
		}
		if len(out.Events) != 3 || out.Events[1].Kind != changelog.ItemHidden || out.Events[1].Note != changelog.NoteByFlags ||
			out.Events[1].Ref != "d1" || out.Events[1].ID != "r1" || out.Events[2].Kind != changelog.DiscussionChanged ||
			out.Events[2].Ref != changelog.RefStatus || out.Events[2].Note != string(discussions.StatusOpen) || out.Events[2].ID != "d1" {
			t.Fatalf("events: %+v", out.Events)
		}
		// Deterministic: deciding again gives the same entries.
		again, err := decideFlag(FlagState{Discussion: d, Reply: r, Item: &Item{ID: "r1", Kind: KindReply, DiscussionID: "d1",
			AuthorID: "bob", Flags: 2, Reasons: map[Reason]int{ReasonSpam: 1, ReasonWrong: 1}, FirstFlagAt: t0, LastFlagAt: t0.Add(time.Minute)}},
			FlagCommand{Target: onReply, AgentID: who, AgentName: who, Reason: reasons[i], Note: "n", At: at}, p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.Entries, out.Entries) {
			t.Fatalf("entries differ on a second decision:\n%+v\n%+v", again.Entries, out.Entries)
		}
	}
	// Moderated items take more flags, but a hidden item is never hidden
	// twice: flags past the threshold on an item a moderator hid and then
	// showed count again from zero.
	if _, err := decideFlag(FlagState{Discussion: d, Reply: r, Item: &Item{ID: "r1", Kind: KindReply, DiscussionID: "d1",
		AuthorID: "bob", Flags: 5, Hidden: HiddenByModerator}}, FlagCommand{Target: onReply, AgentID: "zed", Reason: ReasonSpam, At: t0},
		p); err != nil {
		t.Fatal(err)
	}
}

func TestDecideFlagNoThreshold(t *testing.T) {
	out, err := decideFlag(FlagState{Discussion: disc(), Item: &Item{ID: "d1", Kind: KindDiscussion, DiscussionID: "d1", Flags: 10}},
		FlagCommand{Target: onDisc, AgentID: "carol", Reason: ReasonOther, At: t0}, Policy{})
	if err != nil || out.Result.Hidden || out.Item.Flags != 11 || out.Window != nil {
		t.Fatalf("%+v %v", out, err)
	}
}

func TestDecideModerate(t *testing.T) {
	op := Actor{Kind: ActorOperator, Name: "root"}
	flagged := func(h Hidden) *Item {
		return &Item{ID: "r1", Kind: KindReply, DiscussionID: "d1", AuthorID: "bob", Round: 1, Flags: 3,
			Reasons: map[Reason]int{ReasonSpam: 3}, FirstFlagAt: t0, LastFlagAt: t0, Hidden: h}
	}
	for _, tc := range []struct {
		name     string
		st       State
		c        Command
		want     error
		changed  bool
		hidden   bool
		event    changelog.Kind // "" for none
		content  bool           // the content changes
		itemHide Hidden
	}{
		{name: "hide a public reply", st: State{Discussion: disc(), Reply: reply()}, c: Command{Action: ActionHide, Target: onReply},
			changed: true, hidden: true, event: changelog.ItemHidden, content: true, itemHide: HiddenByModerator},
		{name: "hide a public discussion", st: State{Discussion: disc()}, c: Command{Action: ActionHide, Target: onDisc},
			changed: true, hidden: true, event: changelog.ItemHidden, content: true, itemHide: HiddenByModerator},
		{name: "confirm what flags hid", st: State{Discussion: disc(), Reply: reply(hiddenR), Item: flagged(HiddenByFlags)},
			c: Command{Action: ActionHide, Target: onReply}, changed: true, hidden: true, itemHide: HiddenByModerator},
		{name: "hide what a moderator hid", st: State{Discussion: disc(), Reply: reply(hiddenR), Item: flagged(HiddenByModerator)},
			c: Command{Action: ActionHide, Target: onReply}, hidden: true},
		{name: "unhide", st: State{Discussion: disc(hiddenD), Item: &Item{ID: "d1", Kind: KindDiscussion, DiscussionID: "d1",
			Hidden: HiddenByModerator}}, c: Command{Action: ActionUnhide, Target: onDisc}, changed: true, event: changelog.ItemUnhidden,
			content: true},
		{name: "unhide what is public", st: State{Discussion: disc()}, c: Command{Action: ActionUnhide, Target: onDisc}},
		{name: "dismiss open flags", st: State{Discussion: disc(), Reply: reply(), Item: flagged(NotHidden)},
			c: Command{Action: ActionDismiss, Target: onReply}, changed: true},
		{name: "dismiss the flags that hid it", st: State{Discussion: disc(), Reply: reply(hiddenR), Item: flagged(HiddenByFlags)},
			c: Command{Action: ActionDismiss, Target: onReply}, changed: true, event: changelog.ItemUnhidden, content: true},
		{name: "dismiss flags on what a moderator hid", st: State{Discussion: disc(), Reply: reply(hiddenR), Item: flagged(HiddenByModerator)},
			c: Command{Action: ActionDismiss, Target: onReply}, changed: true, hidden: true, itemHide: HiddenByModerator},
		{name: "dismiss no flags", st: State{Discussion: disc(), Reply: reply()}, c: Command{Action: ActionDismiss, Target: onReply}},
		{name: "no discussion", st: State{}, c: Command{Action: ActionHide, Target: onDisc}, want: ErrItemNotFound},
		{name: "no reply", st: State{Discussion: disc()}, c: Command{Action: ActionHide, Target: onReply}, want: ErrItemNotFound},
		{name: "another discussion's reply", st: State{Discussion: disc(), Reply: reply(func(r *discussions.Reply) { r.DiscussionID = "d2" })},
			c: Command{Action: ActionHide, Target: onReply}, want: ErrItemNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Actor, c.Reason, c.At = op, "why", t0.Add(time.Hour)
			out, err := DecideModerate(tc.st, c)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Result.Changed != tc.changed || out.Result.Hidden != tc.hidden {
				t.Fatalf("result %+v, want changed %v hidden %v", out.Result, tc.changed, tc.hidden)
			}
			if !tc.changed {
				if len(out.Entries) != 0 || len(out.Events) != 0 || out.Content != (Content{}) {
					t.Fatalf("writes without a change: %+v", out)
				}
				return
			}
			if (tc.event == "") != (len(out.Events) == 0) || tc.event != "" && out.Events[0].Kind != tc.event {
				t.Fatalf("events %+v, want %q", out.Events, tc.event)
			}
			if (out.Content != Content{}) != tc.content {
				t.Fatalf("content %+v, want a change: %v", out.Content, tc.content)
			}
			if out.Item.Hidden != tc.itemHide || out.Item.Flags != 0 || out.Item.Reasons != nil || out.Item.Queued {
				t.Fatalf("item %+v: the review must settle the flags, hidden %q", out.Item, tc.itemHide)
			}
			round := 0
			if tc.st.Item != nil {
				round = tc.st.Item.Round
			}
			if out.Item.Round != round+1 {
				t.Fatalf("round %d, want %d", out.Item.Round, round+1)
			}
			e := out.Entries
			if len(e) != 1 || e[0].Action != c.Action || e[0].Actor != op || e[0].Reason != "why" || e[0].ItemID != c.Target.ID ||
				e[0].DiscussionID != "d1" || !e[0].At.Equal(c.At) {
				t.Fatalf("entries: %+v", e)
			}
			if tc.content && c.Target.Kind == KindReply && out.Content.Reply.Hidden != tc.hidden {
				t.Fatalf("reply after: %+v", out.Content.Reply)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, s := range []string{"spam", "wrong", "unsafe", "off-topic", "other"} {
		if r, err := ParseReason(s); err != nil || string(r) != s {
			t.Fatalf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "Spam", "rude", "spam "} {
		if _, err := ParseReason(s); err == nil {
			t.Fatalf("reason %q accepted", s)
		}
	}
	if _, err := ParseKind("thread"); err == nil {
		t.Fatal("kind thread accepted")
	}
}

// TestModerateAnswers: hiding or unhiding a reply answers its discussion
// by its earliest visible qualifying reply, saying so in an event when
// the status or the answer time moves.
func TestModerateAnswers(t *testing.T) {
	bob := reply(func(r *discussions.Reply) { r.CreatedAt = t0.Add(time.Second) })
	carol := &discussions.Reply{ID: "r2", DiscussionID: "d1", AuthorID: "carol", CreatedAt: t0.Add(2 * time.Second)}
	answeredBy := func(r *discussions.Reply) *discussions.Discussion {
		d := discussions.Answered(*disc(), r)
		return &d
	}
	op := Actor{Kind: ActorOperator, Name: "root"}
	for _, tc := range []struct {
		name   string
		st     State
		action Action
		status discussions.Status
		at     time.Time
		event  bool // a status event
	}{
		{"hiding the only answer opens the discussion", State{Discussion: answeredBy(bob), Reply: bob}, ActionHide,
			discussions.StatusOpen, time.Time{}, true},
		{"hiding the first answer leaves the next", State{Discussion: answeredBy(bob), Reply: bob, Answer: carol}, ActionHide,
			discussions.StatusAnswered, carol.CreatedAt, true},
		{"unhiding the only answer answers it again, at its time", State{Discussion: func() *discussions.Discussion {
			d := discussions.Answered(*disc(), nil)
			d.HiddenReplies = 1
			return &d
		}(), Reply: reply(hiddenR, func(r *discussions.Reply) { r.CreatedAt = t0.Add(time.Second) }),
			Item: &Item{ID: "r1", Kind: KindReply, DiscussionID: "d1", Hidden: HiddenByModerator}}, ActionUnhide,
			discussions.StatusAnswered, t0.Add(time.Second), true},
		{"hiding a later answer moves nothing", State{Discussion: answeredBy(carol), Reply: reply(func(r *discussions.Reply) {
			r.CreatedAt = t0.Add(3 * time.Second)
		}), Answer: carol}, ActionHide, discussions.StatusAnswered, carol.CreatedAt, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecideModerate(tc.st, Command{Action: tc.action, Target: onReply, Actor: op, Reason: "why", At: t0.Add(time.Hour)})
			if err != nil || out.Content.Discussion == nil {
				t.Fatalf("%+v %v", out, err)
			}
			if d := out.Content.Discussion; d.Status != tc.status || !d.AnsweredAt.Equal(tc.at) {
				t.Fatalf("%s at %s, want %s at %s", d.Status, d.AnsweredAt, tc.status, tc.at)
			}
			var status []changelog.Event
			for _, e := range out.Events {
				if e.Kind == changelog.DiscussionChanged && e.Ref == changelog.RefStatus {
					status = append(status, e)
				}
			}
			if tc.event != (len(status) == 1) || len(status) > 1 || tc.event && status[0].Note != string(tc.status) {
				t.Fatalf("status events %+v, want one: %v", status, tc.event)
			}
		})
	}
}
