package moderation

import "github.com/kfa-project/kfa/discussions"

// Found is what a store found of a target, under the discussion's lock:
// the discussion the target names by id (a discussion target, or one of
// either kind), the reply of the target's id with its discussion, and the
// item. A store loads what the target's kind needs: the discussion alone
// for a discussion, the reply and its discussion for a reply (named with
// its discussion, or by id alone), all of them for either.
type Found struct {
	Discussion *discussions.Discussion
	Reply      *discussions.Reply
	// ReplyDiscussion is the reply's discussion.
	ReplyDiscussion *discussions.Discussion
	Item            *Item
}

// Locate is the lookup of a target: its kind, when it was named by id
// alone (Kind "": a discussion of that id if there is one, else a reply
// of that id), and its discussion id for a reply; and the state the
// decisions take. A target found as neither keeps Kind "" and a state
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
	return t, st
}
