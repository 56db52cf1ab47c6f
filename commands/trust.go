package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/trust"
)

// The trust commands, as the stores' statistics name them.
const (
	CmdVote            = "vote"
	CmdVerify          = "verify"
	CmdResetReputation = "reputation-reset"
)

// The trust commands (package trust): a vote, a verification, a
// reputation's reset. Each is decided under the agent's lock (its vote
// window, shared by votes and verifications, is one more state the
// decision reads), then the reply's discussion under a share lock (a hide
// takes it to write, so a signal never lands on content being hidden, and
// a hide reads the tally no signal is moving), then the item's tally
// under its lock (the signals on one item are decided one at a time).

// signalTarget is what a vote or a verification loads of its item.
type signalTarget struct {
	disc  *discussions.Discussion
	reply *discussions.Reply
	tally *trust.Tally
}

// load queues the loads of item, after the agent's lock and window.
func (x *signalTarget) load(l storage.Loader, item trust.Item) {
	x.disc, x.reply = nil, nil
	if item.Kind == trust.ItemReply {
		storage.One(l, Discussions, k(item.DiscussionID), storage.Share, &x.disc)
		storage.One(l, Replies, k(item.DiscussionID, item.ID), storage.Read, &x.reply)
	}
	storage.One(l, Tallies, itemKey(item), storage.Lock, &x.tally)
}

func (x *signalTarget) target(record bool) trust.Target {
	return trust.Target{Discussion: x.disc, Reply: x.reply, Record: record}
}

// putSignals adds what a vote or a verification writes beside its own
// record: the tally, the agent's window and the reputation moves.
func (x *signalTarget) putSignals(w *storage.Writes, t *trust.Tally, window *Window, agent string, next *time.Time,
	moves []trust.Move) {
	storage.Put(w, Tallies, x.tally, t)
	putVoteWindow(w, window, agent, next)
	addMoves(w, moves)
}

// Vote implements trust.Store: the voter under its lock (a revoked one
// is refused) and its vote window, the item (see signalTarget), the voter's standing vote;
// trust.DecideVote; the vote (or its removal), the tally, the window, the
// reputation's counters, the author's "voted" notice and the event.
func (c *Commands) Vote(ctx context.Context, cmd trust.VoteCommand, lim trust.Limits) (trust.VoteResult, error) {
	var (
		voter    *agents.Agent
		window   *Window
		x        signalTarget
		standing *trust.Vote
		out      trust.VoteOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdVote,
		Load: func(l storage.Loader) error {
			lockAgent(l, cmd.AgentID, &voter)
			storage.One(l, VoteWindows, k(cmd.AgentID), storage.Read, &window)
			x.load(l, cmd.Item)
			storage.One(l, Votes, itemKey(cmd.Item, cmd.AgentID), storage.Read, &standing)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var err error
			out, err = trust.DecideVote(trust.VoteState{Voter: voter, Target: x.target(cmd.Record), Tally: x.tally, Standing: standing,
				Window: windowAt(window)}, cmd, lim)
			if err != nil || !out.Result.Changed {
				return nil, err
			}
			w := &storage.Writes{}
			switch {
			case out.Vote != nil:
				storage.Put(w, Votes, standing, out.Vote)
			case standing != nil:
				storage.Delete(w, Votes, standing)
			}
			x.putSignals(w, &out.Tally, window, cmd.AgentID, out.Window, out.Moves)
			if out.Notice != nil {
				storage.Put(w, Inbox, nil, out.Notice)
			}
			w.Log(cmd.At, out.Events...)
			return w, nil
		}})
	return out.Result, err
}

// latestWorked is how many of an item's newest "worked" reports a
// verification reads: its own standing one may be among them, and the
// newest other one is then the next.
const latestWorked = 2

// Verify implements trust.Store: Vote's loads, with the reporter's
// standing report and the item's newest "worked" reports;
// trust.DecideVerify; the report, the tally, the window, the reputation's
// counters and the event.
func (c *Commands) Verify(ctx context.Context, cmd trust.VerifyCommand, lim trust.Limits) (trust.VerifyResult, error) {
	var (
		voter    *agents.Agent
		window   *Window
		x        signalTarget
		standing *trust.Verification
		latest   []trust.Verification
		out      trust.VerifyOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdVerify,
		Load: func(l storage.Loader) error {
			lockAgent(l, cmd.AgentID, &voter)
			storage.One(l, VoteWindows, k(cmd.AgentID), storage.Read, &window)
			x.load(l, cmd.Item)
			storage.One(l, Verifications, itemKey(cmd.Item, cmd.AgentID), storage.Read, &standing)
			latest = latest[:0]
			l.Range(storage.Range{Index: VerificationsByOutcome, Prefix: itemKey(cmd.Item, string(trust.Worked)), Of: storage.NoRef,
				Limit: latestWorked, Reverse: true, Dst: &latest})
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var err error
			out, err = trust.DecideVerify(trust.VerifyState{Voter: voter, Target: x.target(cmd.Record), Tally: x.tally, Standing: standing,
				LatestWorked: latest, Window: windowAt(window)}, cmd, lim)
			if err != nil || !out.Result.Changed {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Verifications, standing, &out.Verification)
			x.putSignals(w, &out.Tally, window, cmd.AgentID, out.Window, out.Moves)
			w.Log(cmd.At, out.Events...)
			return w, nil
		}})
	return out.Result, err
}

// ResetReputation implements trust.Store: the agent, and an agent
// moderator (a revoked one is refused), under their locks in id order
// (two resets of each other's reputation never wait on each other), the
// agent's reputation; trust.DecideReset; the adjustment, the audit entry and the
// event. A signal committing while the reset reads is counted after it.
func (c *Commands) ResetReputation(ctx context.Context, cmd trust.Reset) (trust.ResetOutcome, error) {
	var (
		loaded    []agents.Agent
		actor, ag *agents.Agent
		rep       repRead
		out       trust.ResetOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdResetReputation,
		Load: func(l storage.Loader) error {
			keys := []storage.Key{k(cmd.AgentID)}
			if cmd.Actor.Kind == moderation.ActorAgent && cmd.Actor.ID != cmd.AgentID {
				keys = append(keys, k(cmd.Actor.ID))
			}
			storage.All(l, Agents, keys, storage.Lock, &loaded)
			rep = repRead{}
			loadReputation(l, cmd.AgentID, &rep)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var err error
			actor, ag = nil, nil
			for i := range loaded {
				if loaded[i].ID == cmd.AgentID {
					ag = &loaded[i]
				}
				if cmd.Actor.Kind == moderation.ActorAgent && loaded[i].ID == cmd.Actor.ID {
					actor = &loaded[i]
				}
			}
			if out, err = trust.DecideReset(actor, ag != nil, rep.reputation(), cmd); err != nil || out.Entry == nil {
				return nil, err
			}
			w := &storage.Writes{}
			addMoves(w, out.Moves)
			storage.Put(w, ModerationLog, nil, out.Entry)
			w.Log(cmd.At, out.Events...)
			return w, nil
		}})
	return out, err
}

// VoteWindow implements trust.Store.
func (c *Commands) VoteWindow(ctx context.Context, agentID string) (time.Time, error) {
	var window *Window
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		storage.One(l, VoteWindows, k(agentID), storage.Read, &window)
		return nil
	})
	return windowAt(window), err
}
