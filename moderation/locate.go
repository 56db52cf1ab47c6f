package moderation

import "github.com/kfa-project/kfa/discussions"

// Found is what a store found of a target, under the discussion's lock:
// the discussion the target names by id (a discussion target, or one of
// either kind), the reply of the target's id with its discussion, and the
// item. A store loads what the target's kind needs: the discussion alone
// for a discussion, the reply and its discussion for a reply (named with
// its discussion, or by id alone), all of them for either; for a reply,
// the replies of its discussion too (what answers it besides the reply).
type Found struct {
	Discussion *discussions.Discussion
	Reply      *discussions.Reply
	// ReplyDiscussion is the reply's discussion.
	ReplyDiscussion *discussions.Discussion
	// Replies are the replies of the reply's discussion, in any order
	// (the reply among them or not): State.Answer is found among them.
	Replies []discussions.Reply
	Item    *Item
}

// Locate is the lookup of a target: its kind, when it was named by id
// alone (Kind "": a discussion of that id if there is one, else a reply
// of that id), and its discussion id for a reply; and the state the
// decisions take, with a reply's Answer: the earliest visible qualifying
// reply of its discussion besides it. A target found as neither keeps Kind "" and a state
// without a discussion, which DecideModerate refuses with an
// *ItemNotFoundError.
func Locate(t Target, f Found) (Target, State) {
	st := State{Item: f.Item}
	switch {
	case t.Kind != KindReply && f.Discussion != nil:
		t.Kind = KindDiscussion
		st.Discussion = f.Discussion
		return t, st
	case t.Kind == KindDiscussion, t.Kind == "" && f.Reply == nil:
		return t, st
	}
	t.Kind = KindReply
	if t.DiscussionID == "" && f.Reply != nil {
		t.DiscussionID = f.Reply.DiscussionID
	}
	st.Discussion, st.Reply = f.ReplyDiscussion, f.Reply
	if st.Discussion != nil && st.Reply != nil {
		st.Answer = answerBesides(*st.Discussion, f.Replies, st.Reply.ID)
	}
	return t, st
}

// answerBesides is d's earliest visible qualifying reply among replies,
// other than reply skip (discussions.FirstAnswer), as a copy.
func answerBesides(d discussions.Discussion, replies []discussions.Reply, skip string) *discussions.Reply {
	others := make([]discussions.Reply, 0, len(replies))
	for _, r := range replies {
		if r.ID != skip {
			others = append(others, r)
		}
	}
	if a := discussions.FirstAnswer(d, others); a != nil {
		answer := *a
		return &answer
	}
	return nil
}
