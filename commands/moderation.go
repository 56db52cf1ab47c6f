package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/trust"
)

// maxDiscussionReplies bounds what a moderation command loads of a
// reply's discussion's replies: far beyond any --max-replies.
const maxDiscussionReplies = 1 << 20

// target is what a moderation command loads of its target
// (moderation.Found), with the ranges that find a reply by id alone.
type target struct {
	found   moderation.Found
	replies []discussions.Reply
	discs   []discussions.Discussion
	// tally is a reply's signals (nil for none, and for a discussion),
	// which hiding it takes from its author's reputation: no signal moves
	// it meanwhile (a signal holds the discussion's share lock).
	tally *trust.Tally
}

// load queues the loads of what t names, under its discussion's lock: a
// discussion by id; a reply with its discussion; a reply by id alone with
// the discussion its key begins with (one round trip: a range under the
// reply's key); for a target of either kind, both. For a reply, the
// replies of its discussion too, briefly (no bodies, where the store can
// leave them out), from which moderation.Locate picks what answers the
// discussion besides the reply: a range under the reply's key again.
func (x *target) load(l storage.Loader, t moderation.Target) {
	x.found = moderation.Found{}
	x.replies, x.discs = x.replies[:0], x.discs[:0]
	var reply storage.Ref
	switch {
	case t.Kind == moderation.KindDiscussion:
		storage.One(l, Discussions, k(t.ID), storage.Lock, &x.found.Discussion)
		reply = storage.NoRef
	case t.Kind == moderation.KindReply && t.DiscussionID != "":
		storage.One(l, Discussions, k(t.DiscussionID), storage.Lock, &x.found.ReplyDiscussion)
		reply = storage.One(l, Replies, k(t.DiscussionID, t.ID), storage.Read, &x.found.Reply)
	default:
		if t.Kind == "" {
			storage.One(l, Discussions, k(t.ID), storage.Lock, &x.found.Discussion)
		}
		reply = storage.Many(l, RepliesByID, k(t.ID), 1, storage.Read, &x.replies)
		l.Range(storage.Range{Index: Discussions.Keys(), Of: reply, Parts: 1, Limit: 1, Mode: storage.Lock, Dst: &x.discs})
	}
	x.found.Replies = x.found.Replies[:0]
	if reply != storage.NoRef {
		l.Range(storage.Range{Index: Replies.Keys(), Of: reply, Parts: 1, Limit: maxDiscussionReplies, Brief: true,
			Dst: &x.found.Replies})
	}
	storage.One(l, ModerationItems, k(t.ID), storage.Read, &x.found.Item)
	storage.One(l, Tallies, itemKey(trust.ReplyItem("", t.ID)), storage.Read, &x.tally)
}

// located is t found: its kind and the state the decisions take.
func (x *target) located(t moderation.Target) (moderation.Target, moderation.State) {
	if r := one(x.replies); r != nil {
		x.found.Reply, x.found.ReplyDiscussion = r, one(x.discs)
	}
	return moderation.Locate(t, x.found)
}

// writeModeration adds what a moderation decision writes: the item, the
// content it changed, what that did to its author's reputation
// (trust.ContentMoves, with the reply's tally), its audit entries and its
// events.
func writeModeration(w *storage.Writes, st moderation.State, it *moderation.Item, c moderation.Content, tally *trust.Tally,
	entries []moderation.Entry, at time.Time, events []changelog.Event) {
	addMoves(w, trust.ContentMoves(st.Discussion, st.Reply, c.Discussion, c.Reply, tally))
	storage.Put(w, ModerationItems, st.Item, it)
	if c.Discussion != nil {
		storage.Put(w, Discussions, st.Discussion, c.Discussion)
	}
	if c.Reply != nil {
		storage.Put(w, Replies, st.Reply, c.Reply)
	}
	for i := range entries {
		storage.Put(w, ModerationLog, nil, &entries[i])
	}
	w.Log(at, events...)
}

// FlagItem implements moderation.Store: the flagger under its lock and
// its flag window, the target under its discussion's lock, whether the agent
// flagged it, moderation.DecideFlag, the flag and the moderation writes.
// Every flag on one discussion's items is decided under that discussion's
// lock, so the threshold hides an item once, whichever process the flags
// come through.
func (c *Commands) FlagItem(ctx context.Context, cmd moderation.FlagCommand, p moderation.Policy) (moderation.FlagResult, error) {
	var (
		agent   *agents.Agent
		window  *Window
		x       target
		flagged *moderation.Flag
		out     moderation.FlagOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdFlag,
		Load: func(l storage.Loader) error {
			lockAgent(l, cmd.AgentID, &agent)
			storage.One(l, Windows, k(WindowFlag, cmd.AgentID), storage.Read, &window)
			x.load(l, cmd.Target)
			storage.One(l, ModerationFlags, k(cmd.Target.ID, cmd.AgentID), storage.Read, &flagged)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			t, st := x.located(cmd.Target)
			located := cmd
			located.Target = t
			var err error
			out, err = moderation.DecideFlag(moderation.FlagState{Agent: agent, Discussion: st.Discussion, Reply: st.Reply,
				Answer: st.Answer, Item: st.Item, Flagged: flagged != nil, Window: windowAt(window)}, located, p)
			if err != nil || out.Result.AlreadyFlagged {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, ModerationFlags, nil, &out.Flag)
			putWindow(w, window, WindowFlag, cmd.AgentID, out.Window)
			writeModeration(w, st, &out.Item, out.Content, x.tally, out.Entries, cmd.At, out.Events)
			return w, nil
		}})
	return out.Result, err
}

// Moderate implements moderation.Store: an agent moderator under a share
// lock, the target (of either kind when
// its kind is empty) under its discussion's lock, moderation.Locate,
// moderation.DecideModerate, the moderation writes.
func (c *Commands) Moderate(ctx context.Context, cmd moderation.Command) (moderation.Result, error) {
	var (
		actor *agents.Agent
		x     target
		out   moderation.Outcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdModerate,
		Load: func(l storage.Loader) error {
			actor = nil
			if cmd.Actor.Kind == moderation.ActorAgent {
				actingAgent(l, cmd.Actor.ID, &actor)
			}
			x.load(l, cmd.Target)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			t, st := x.located(cmd.Target)
			st.Actor = actor
			located := cmd
			located.Target = t
			var err error
			if out, err = moderation.DecideModerate(st, located); err != nil || !out.Result.Changed {
				return nil, err
			}
			w := &storage.Writes{}
			writeModeration(w, st, &out.Item, out.Content, x.tally, out.Entries, cmd.At, out.Events)
			return w, nil
		}})
	return out.Result, err
}
