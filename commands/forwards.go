package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/storage"
)

// Forwards are the asks forwarded to peers, by discussion and peer.
var Forwards = storage.NewKind("peer.forward", func(f *peers.Forward) storage.Key { return k(f.DiscussionID, f.Peer) },
	jsonCodec[peers.Forward]("forward"))

// ForwardsOpen lists each peer's open forwards by state, the pending ones
// in due order: what a peer's forwarder sends and polls. A forward
// answered or closed is left out.
var ForwardsOpen = Forwards.Index("peer.forward.open", func(f *peers.Forward) (storage.Key, bool) {
	return k(f.Peer, string(f.State), storage.Millis(f.NextAt)), f.Open()
})

// The forwards' commands, as a store's statistics name them.
const (
	CmdForwardPlan   = "forward-plan"
	CmdForwardClose  = "forward-close"
	CmdForwardClaim  = "forward-claim"
	CmdForwardRecord = "forward-record"
	CmdAnswer        = "answer"
)

// maxForwardsOfDiscussion bounds what a command loads of one
// discussion's forwards: one per peer at most.
const maxForwardsOfDiscussion = peers.MaxPeers

// PlanForwards implements peers.Store: the discussion under its lock,
// the peers, the discussion's forwards; peers.DecideForwards; the new
// forwards.
func (c *Commands) PlanForwards(ctx context.Context, discussionID string, now time.Time) ([]peers.Forward, error) {
	var (
		d        *discussions.Discussion
		ps       []peers.Peer
		existing []peers.Forward
		out      []peers.Forward
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdForwardPlan,
		Load: func(l storage.Loader) error {
			storage.One(l, Discussions, k(discussionID), storage.Lock, &d)
			storage.Many(l, Peers.Keys(), nil, peers.MaxPeers+1, storage.Read, &ps)
			storage.Many(l, Forwards.Keys(), k(discussionID), maxForwardsOfDiscussion, storage.Read, &existing)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			if out = peers.DecideForwards(d, ps, existing, now); len(out) == 0 {
				return nil, nil
			}
			w := &storage.Writes{}
			for i := range out {
				storage.Put(w, Forwards, nil, &out[i])
			}
			return w, nil
		}})
	return out, err
}

// CloseForwards implements peers.Store: the discussion under its lock
// and its forwards; once it is answered, peers.DecideClose.
func (c *Commands) CloseForwards(ctx context.Context, discussionID string, now time.Time) error {
	var (
		d   *discussions.Discussion
		fs  []peers.Forward
		old = map[string]*peers.Forward{}
	)
	return c.e.Run(ctx, storage.Command{Name: CmdForwardClose,
		Load: func(l storage.Loader) error {
			storage.One(l, Discussions, k(discussionID), storage.Lock, &d)
			storage.Many(l, Forwards.Keys(), k(discussionID), maxForwardsOfDiscussion, storage.Lock, &fs)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			if d == nil || d.Status != discussions.StatusAnswered {
				return nil, nil
			}
			for i := range fs {
				old[fs[i].Peer] = &fs[i]
			}
			closed := peers.DecideClose(fs, now)
			if len(closed) == 0 {
				return nil, nil
			}
			w := &storage.Writes{}
			for i := range closed {
				storage.Put(w, Forwards, old[closed[i].Peer], &closed[i])
			}
			return w, nil
		}})
}

// ListForwards implements peers.Store.
func (c *Commands) ListForwards(ctx context.Context, peer string, state peers.ForwardState, limit int) ([]peers.Forward, error) {
	var out []peers.Forward
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		storage.Many(l, ForwardsOpen, k(peer, string(state)), limit, storage.Read, &out)
		return nil
	})
	return out, err
}

// forwardStep runs a decision on one forward under its lock and writes
// the forward it returns (ok false: nothing).
func (c *Commands) forwardStep(ctx context.Context, name, peer, discussionID string,
	decide func(f *peers.Forward) (peers.Forward, bool)) (peers.Forward, bool, error) {
	var (
		f   *peers.Forward
		out peers.Forward
		ok  bool
	)
	err := c.e.Run(ctx, storage.Command{Name: name,
		Load: func(l storage.Loader) error {
			storage.One(l, Forwards, k(discussionID, peer), storage.Lock, &f)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			if out, ok = decide(f); !ok {
				return nil, nil
			}
			w := &storage.Writes{}
			storage.Put(w, Forwards, f, &out)
			return w, nil
		}})
	return out, ok, err
}

// ClaimForward implements peers.Store: peers.DecideClaim.
func (c *Commands) ClaimForward(ctx context.Context, peer, discussionID string, now time.Time) (peers.Forward, bool, error) {
	return c.forwardStep(ctx, CmdForwardClaim, peer, discussionID, func(f *peers.Forward) (peers.Forward, bool) {
		return peers.DecideClaim(f, now)
	})
}

// ForwardSent implements peers.Store: peers.DecideSent.
func (c *Commands) ForwardSent(ctx context.Context, peer, discussionID string, a peers.Asked, now time.Time) error {
	_, _, err := c.forwardStep(ctx, CmdForwardRecord, peer, discussionID, func(f *peers.Forward) (peers.Forward, bool) {
		return peers.DecideSent(f, a, now)
	})
	return err
}

// ForwardFailed implements peers.Store: peers.DecideSendFailed.
func (c *Commands) ForwardFailed(ctx context.Context, peer, discussionID, errText string, now time.Time) error {
	_, _, err := c.forwardStep(ctx, CmdForwardRecord, peer, discussionID, func(f *peers.Forward) (peers.Forward, bool) {
		return peers.DecideSendFailed(f, errText, now)
	})
	return err
}

// AddAnswer implements peers.Store: the discussion under its lock, its
// WORKING tasks under theirs (headers) with their push configs, its
// members (as a reply's load, with no author to lock: the author is
// remote), the reply already stored under the answer's id, and the
// discussion's forwards under their locks; peers.DecideAnswer; the
// reply's writes and the forwards it changed.
func (c *Commands) AddAnswer(ctx context.Context, a peers.Answer, lim discussions.Limits, now time.Time) (peers.AnswerOutcome, error) {
	id, err := peers.AnswerReplyID(a.Peer, a.ReplyID)
	if err != nil {
		return peers.AnswerOutcome{}, err
	}
	var (
		disc     *discussions.Discussion
		working  []Task
		configs  []push.Config
		members  []storage.Key
		existing *discussions.Reply
		fs       []peers.Forward
		out      peers.AnswerOutcome
	)
	err = c.e.Run(ctx, storage.Command{Name: CmdAnswer,
		Load: func(l storage.Loader) error {
			storage.One(l, Discussions, k(a.DiscussionID), storage.Lock, &disc)
			ref := l.Range(storage.Range{Index: TasksWorking, Prefix: k(a.DiscussionID), Of: storage.NoRef,
				Limit: maxDiscussionTasks, Mode: storage.Lock, Brief: true, Dst: &working})
			storage.Under(l, PushConfigs.Keys(), ref, maxDiscussionTasks, storage.Read, &configs)
			storage.Entries(l, TasksOfDiscussion, k(a.DiscussionID), maxDiscussionTasks, &members)
			storage.One(l, Replies, k(a.DiscussionID, id), storage.Read, &existing)
			storage.Many(l, Forwards.Keys(), k(a.DiscussionID), maxForwardsOfDiscussion, storage.Lock, &fs)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st := peers.AnswerState{Existing: existing, Reply: asknet.ReplyState{Discussion: disc, Members: membersOf(members)}}
			old := map[string]*peers.Forward{}
			for i := range fs {
				old[fs[i].Peer] = &fs[i]
			}
			st.Forward = old[a.Peer]
			for i := range working {
				st.Reply.Working = append(st.Reply.Working, working[i].Task)
			}
			for _, cfg := range configs {
				if st.Reply.Configs == nil {
					st.Reply.Configs = map[string][]push.Config{}
				}
				st.Reply.Configs[cfg.TaskID] = append(st.Reply.Configs[cfg.TaskID], cfg)
			}
			var err error
			if out, err = peers.DecideAnswer(st, a, fs, lim, now); err != nil || out.Reply == nil {
				return nil, err
			}
			w, err := replyWrites(out.Reply, disc, nil, working)
			if err != nil {
				return nil, err
			}
			for i := range out.Forwards {
				storage.Put(w, Forwards, old[out.Forwards[i].Peer], &out.Forwards[i])
			}
			return w, nil
		}})
	return out, err
}
