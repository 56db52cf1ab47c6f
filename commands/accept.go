package commands

import (
	"context"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/trust"
)

// AcceptReply implements discussions.Store: the caller under a share
// lock, the discussion under its lock and the reply, then (a second
// read: which reply held the mark is in the discussion) the reply that
// held the mark, whose author loses it; discussions.DecideAccept; the
// discussion, the reputation moves (trust.AcceptMoves), the author's
// "accepted" notice and the event. Accepts are rare: the one more round
// trip is not worth a copy of the accepted reply's author in the
// discussion.
func (c *Commands) AcceptReply(ctx context.Context, a discussions.Accept) (discussions.AcceptOutcome, error) {
	var (
		st  discussions.AcceptState
		old *discussions.Reply
		out discussions.AcceptOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdAccept,
		Load: func(l storage.Loader) error {
			actingAgent(l, a.CallerID, &st.Caller)
			storage.One(l, Discussions, k(a.DiscussionID), storage.Lock, &st.Discussion)
			storage.One(l, Replies, k(a.DiscussionID, a.ReplyID), storage.Read, &st.Reply)
			old = nil
			if err := l.Flush(); err != nil {
				return err
			}
			if d := st.Discussion; d != nil && d.AcceptedReplyID != "" && d.AcceptedReplyID != a.ReplyID {
				storage.One(l, Replies, k(d.ID, d.AcceptedReplyID), storage.Read, &old)
			}
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var err error
			if out, err = discussions.DecideAccept(st, a); err != nil || !out.Changed {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Discussions, st.Discussion, &out.Discussion)
			oldAuthor := ""
			if old != nil {
				oldAuthor = old.AuthorID
			}
			addMoves(w, trust.AcceptMoves(oldAuthor, st.Reply.AuthorID))
			if out.Notice != nil {
				storage.Put(w, Inbox, nil, out.Notice)
			}
			w.Log(a.At, out.Events...)
			return w, nil
		}})
	return out, err
}
