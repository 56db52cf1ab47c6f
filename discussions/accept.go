package discussions

import (
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
)

// Accept is the command that marks reply ReplyID as the answer the
// asker accepted on discussion DiscussionID.
type Accept struct {
	DiscussionID string
	ReplyID      string
	// CallerID is the agent that accepts: it must be the asker.
	CallerID string
	At       time.Time
}

// AcceptState is what an accept decides on, loaded under the
// discussion's lock: the discussion (nil when none has the id) and the
// reply (nil when the discussion has no reply of that id).
type AcceptState struct {
	// Caller is the accepting agent as loaded under its lock, nil when no
	// agent has the id.
	Caller     *agents.Agent
	Discussion *Discussion
	Reply      *Reply
}

// AcceptOutcome is what an accept does.
type AcceptOutcome struct {
	// Discussion is the discussion after the accept.
	Discussion Discussion
	// Changed is false when the reply was the accepted one already:
	// nothing to write.
	Changed bool
	// Notice tells the reply's author that its reply was accepted (nil
	// when nothing changed).
	Notice *InboxEntry
	Events []changelog.Event
}

// DecideAccept decides c. In order: a caller revoked since its request
// was authenticated is agents.ErrRevoked; no discussion, or a hidden one, is a
// *NotFoundError; a caller other than the asker ErrNotAsker; a reply the
// discussion does not have (another discussion's, say), or a hidden one,
// a *ReplyNotFoundError; the asker's own reply ErrAcceptOwn. Accepting
// another reply moves the mark; accepting the accepted one changes
// nothing.
func DecideAccept(st AcceptState, c Accept) (AcceptOutcome, error) {
	if err := agents.MayAct(st.Caller); err != nil {
		return AcceptOutcome{}, err
	}
	d := st.Discussion
	if d == nil || d.Hidden {
		return AcceptOutcome{}, &NotFoundError{ID: c.DiscussionID}
	}
	if c.CallerID != d.AuthorID {
		return AcceptOutcome{}, ErrNotAsker
	}
	r := st.Reply
	if r == nil || r.DiscussionID != d.ID || r.Hidden {
		return AcceptOutcome{}, &ReplyNotFoundError{DiscussionID: c.DiscussionID, ReplyID: c.ReplyID}
	}
	if r.AuthorID == d.AuthorID {
		return AcceptOutcome{}, ErrAcceptOwn
	}
	out := AcceptOutcome{Discussion: *d}
	if d.AcceptedReplyID == r.ID {
		return out, nil
	}
	out.Discussion.AcceptedReplyID = r.ID
	out.Changed = true
	out.Notice = &InboxEntry{ID: NoticeID(InboxAccepted, r.ID, r.AuthorID, c.At), AgentID: r.AuthorID, Kind: InboxAccepted,
		DiscussionID: d.ID, ReplyID: r.ID, TaskIDs: []string{}, CreatedAt: c.At}
	out.Events = []changelog.Event{AcceptedEvent(d.ID, r.ID, c.CallerID, c.At)}
	return out, nil
}

// AcceptedEvent is the log event of discussionID's accepted reply
// becoming replyID ("" when the mark is taken off), by agent by ("" for
// moderation).
func AcceptedEvent(discussionID, replyID, by string, at time.Time) changelog.Event {
	return changelog.Event{Kind: changelog.DiscussionChanged, ID: discussionID, Owner: by,
		Ref: changelog.RefAccepted, Note: replyID, At: at}
}
