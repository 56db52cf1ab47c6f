package api

import (
	"encoding/json"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/moderation"
)

// FlagRequest is the body of POST /api/v1/discussions/{id}:flag and
// .../replies/{replyId}:flag.
type FlagRequest struct {
	Reason *string `json:"reason"`
	Note   string  `json:"note,omitempty"`
}

// UnmarshalJSON reads a flag and refuses a field other than reason and
// note, naming it.
func (r *FlagRequest) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	for k := range fields {
		if k != "reason" && k != "note" {
			return a2a.BadParam(k, `is not a field of a flag; send {"reason": "spam|wrong|unsafe|off-topic|other", "note": "..."}`)
		}
	}
	type plain FlagRequest // without this method
	return json.Unmarshal(b, (*plain)(r))
}

// FlagResponse is the answer to a flag.
type FlagResponse struct {
	ItemID   string `json:"itemId"`
	ItemKind string `json:"itemKind"`
	// AlreadyFlagged says that the agent had flagged the item before:
	// nothing changed.
	AlreadyFlagged bool `json:"alreadyFlagged"`
}

// AcceptResponse is the answer to POST .../replies/{replyId}:accept: the
// discussion with its new mark.
type AcceptResponse struct {
	DiscussionID    string `json:"discussionId"`
	AcceptedReplyID string `json:"acceptedReplyId"`
	// Changed is false when the reply was the accepted one already.
	Changed bool `json:"changed"`
}

// ModerationRequest is the body of the admin channel's hide, unhide and
// dismiss.
type ModerationRequest struct {
	// Kind is "discussion" or "reply"; empty finds which the id is.
	Kind string `json:"kind,omitempty"`
	ID   string `json:"id"`
	// Reason is why (required to hide and unhide).
	Reason string `json:"reason,omitempty"`
	// By names the operator acting (their login, say), for the log.
	By string `json:"by,omitempty"`
}

// HideAuthorRequest is the body of the admin channel's hide of
// everything an agent wrote.
type HideAuthorRequest struct {
	Reason string `json:"reason"`
	By     string `json:"by,omitempty"`
}

// QueueItem is one item waiting for review, with what a moderator needs
// to judge it.
type QueueItem struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	DiscussionID string `json:"discussionId"`
	AuthorID     string `json:"authorId"`
	// FlagCount is how many agents' flags are open; Reasons counts them
	// by reason.
	FlagCount int            `json:"flagCount"`
	Reasons   map[string]int `json:"reasons"`
	// HiddenBy is "flags" when the flags hid the item pending review,
	// "moderator" when a moderator did, "" when it is public.
	HiddenBy string `json:"hiddenBy,omitempty"`
	// WaitingSince is when the item's wait for review began.
	WaitingSince string `json:"waitingSince,omitempty"`
	// Flags are the open flags, oldest first.
	Flags []QueueFlag `json:"flags"`
	// Title is the discussion's question; Text the item's own text (the
	// question's details, or the reply).
	Title      string `json:"title"`
	Text       string `json:"text"`
	AuthorName string `json:"authorName"`
	Hidden     bool   `json:"hidden"`
}

// QueueFlag is one open flag as the queue shows it.
type QueueFlag struct {
	AgentID   string `json:"agentId"`
	AgentName string `json:"agentName"`
	Reason    string `json:"reason"`
	Note      string `json:"note,omitempty"`
	At        string `json:"at"`
}

// Queue is the review queue: the first items, and how many wait.
type Queue struct {
	Items     []QueueItem `json:"items"`
	TotalSize int         `json:"totalSize"`
}

// FromQueue converts the review queue.
func FromQueue(q []moderation.QueueEntry, total int) Queue {
	out := Queue{Items: make([]QueueItem, len(q)), TotalSize: total}
	for i, e := range q {
		it := QueueItem{ID: e.Item.ID, Kind: string(e.Item.Kind), DiscussionID: e.Item.DiscussionID, AuthorID: e.Item.AuthorID,
			FlagCount: e.Item.Flags, Reasons: map[string]int{}, HiddenBy: string(e.Item.Hidden), WaitingSince: ts(e.Item.Waiting()),
			Flags: make([]QueueFlag, len(e.Flags)), Title: e.Discussion.Title,
			Text: e.Discussion.Body, AuthorName: e.Discussion.AuthorName, Hidden: e.Discussion.Hidden}
		for r, n := range e.Item.Reasons {
			it.Reasons[string(r)] = n
		}
		if e.Reply != nil {
			it.Text, it.AuthorName, it.Hidden = e.Reply.Body, e.Reply.AuthorName, e.Reply.Hidden
		}
		for j, f := range e.Flags {
			it.Flags[j] = QueueFlag{AgentID: f.AgentID, AgentName: f.AgentName, Reason: string(f.Reason), Note: f.Note, At: ts(f.At)}
		}
		out.Items[i] = it
	}
	return out
}

// LogEntry is one action of the moderation log.
type LogEntry struct {
	ID           string           `json:"id"`
	At           string           `json:"at"`
	Action       string           `json:"action"`
	Actor        moderation.Actor `json:"actor"`
	ItemKind     string           `json:"itemKind"`
	ItemID       string           `json:"itemId"`
	DiscussionID string           `json:"discussionId"`
	AuthorID     string           `json:"authorId,omitempty"`
	Reason       string           `json:"reason,omitempty"`
	Note         string           `json:"note,omitempty"`
}

// LogPage is one page of the moderation log, newest first.
type LogPage struct {
	Entries       []LogEntry `json:"entries"`
	NextPageToken string     `json:"nextPageToken"`
}

// FromLog converts a page of the moderation log.
func FromLog(p moderation.LogPage) LogPage {
	out := LogPage{Entries: make([]LogEntry, len(p.Entries)), NextPageToken: p.Next}
	for i, e := range p.Entries {
		out.Entries[i] = LogEntry{ID: e.ID, At: ts(e.At), Action: string(e.Action), Actor: e.Actor, ItemKind: string(e.ItemKind),
			ItemID: e.ItemID, DiscussionID: e.DiscussionID, AuthorID: e.AuthorID, Reason: e.Reason, Note: e.Note}
	}
	return out
}
