package commands

import (
	"context"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/storage"
)

// AcceptReply implements discussions.Store: the caller under a share
// lock, the discussion under its lock and the reply, discussions.DecideAccept, the discussion and its
// event.
func (c *Commands) AcceptReply(ctx context.Context, a discussions.Accept) (discussions.AcceptOutcome, error) {
	var (
		st  discussions.AcceptState
		out discussions.AcceptOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdAccept,
		Load: func(l storage.Loader) error {
			actingAgent(l, a.CallerID, &st.Caller)
			storage.One(l, Discussions, k(a.DiscussionID), storage.Lock, &st.Discussion)
			storage.One(l, Replies, k(a.DiscussionID, a.ReplyID), storage.Read, &st.Reply)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var err error
			if out, err = discussions.DecideAccept(st, a); err != nil || !out.Changed {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Discussions, st.Discussion, &out.Discussion)
			w.Log(a.At, out.Events...)
			return w, nil
		}})
	return out, err
}
