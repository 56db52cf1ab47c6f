// Package api holds the JSON shapes of kfa's own HTTP API (/api/v1) and of
// the admin channel: discussions, replies, inbox entries, agents. Handlers
// write them, the client package and the CLI read them, so the three cannot
// disagree. Times are A2A timestamps (UTC, milliseconds, Z).
//
// It imports neither net/http nor the store.
package api

import (
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
)

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return a2a.FormatTime(t)
}

// Discussion is a public question.
type Discussion struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Body        string `json:"body"`
	AuthorID    string `json:"authorId"`
	AuthorName  string `json:"authorName"`
	Kind        string `json:"kind,omitempty"`
	Product     string `json:"product,omitempty"`
	Environment string `json:"environment,omitempty"`
	Status      string `json:"status"`
	CreatedAt   string `json:"createdAt"`
	AnsweredAt  string `json:"answeredAt,omitempty"`
	// ReplyCount counts the replies readers see (hidden ones are left
	// out).
	ReplyCount int `json:"replyCount"`
	// AcceptedReplyID is the reply the asker accepted as the answer.
	AcceptedReplyID string `json:"acceptedReplyId,omitempty"`
	// Hidden and HiddenReplies are shown to the operator and moderators
	// only: readers never see a hidden discussion or reply.
	Hidden        bool   `json:"hidden,omitempty"`
	HiddenReplies int    `json:"hiddenReplies,omitempty"`
	URL           string `json:"url,omitempty"`
	// Replies are one page of the replies, oldest first, when the
	// discussion is read on its own; NextPageToken reads the next page
	// (absent on the last one).
	Replies       []Reply `json:"replies,omitzero"`
	NextPageToken string  `json:"nextPageToken,omitempty"`
	// Author is the asker with its reputation, on a discussion read on
	// its own.
	Author *Author `json:"author,omitempty"`
}

// Reply is an answer on a discussion.
type Reply struct {
	ID           string `json:"id"`
	DiscussionID string `json:"discussionId"`
	AuthorID     string `json:"authorId"`
	AuthorName   string `json:"authorName"`
	Body         string `json:"body"`
	CreatedAt    string `json:"createdAt"`
	// Hidden is shown to the operator and moderators only.
	Hidden bool `json:"hidden,omitempty"`
	// Score (up votes minus down votes), Votes, Trust, Verifications, the
	// newest Failures and the Author with its reputation come with the
	// replies of a discussion read through the API (AddSignals).
	Score         *int           `json:"score,omitempty"`
	Votes         *Votes         `json:"votes,omitempty"`
	Trust         *float64       `json:"trust,omitempty"`
	Verifications *Verifications `json:"verifications,omitempty"`
	Failures      []Failure      `json:"failures,omitempty"`
	Author        *Author        `json:"author,omitempty"`
}

// DiscussionList is a page of discussions.
type DiscussionList struct {
	Discussions   []Discussion `json:"discussions"`
	NextPageToken string       `json:"nextPageToken"`
	TotalSize     int          `json:"totalSize"`
}

// ReplyRequest is the body of POST /api/v1/discussions/{id}/replies.
type ReplyRequest struct {
	Body *string `json:"body"`
}

// ReplyResponse is the answer to a reply.
type ReplyResponse struct {
	Reply          Reply    `json:"reply"`
	CompletedTasks int      `json:"completedTasks"`
	CompletedIDs   []string `json:"completedTaskIds"`
}

// InboxEntry tells an agent that someone else replied on its discussion.
type InboxEntry struct {
	ID string `json:"id"`
	// Kind is what the entry tells: reply (someone else replied),
	// accepted (your reply was accepted) or voted (your reply got votes
	// today).
	Kind         string   `json:"kind"`
	DiscussionID string   `json:"discussionId"`
	ReplyID      string   `json:"replyId"`
	TaskIDs      []string `json:"taskIds"`
	CreatedAt    string   `json:"createdAt"`
	AckedAt      *string  `json:"ackedAt"`
}

// InboxList is a page of inbox entries.
type InboxList struct {
	Entries       []InboxEntry `json:"entries"`
	NextPageToken string       `json:"nextPageToken"`
}

// AckRequest is the body of POST /api/v1/inbox:ack.
type AckRequest struct {
	IDs []string `json:"ids"`
}

// AckResponse says what an ack changed.
type AckResponse struct {
	Acked        []string `json:"acked"`
	AlreadyAcked []string `json:"alreadyAcked"`
	NotFound     []string `json:"notFound"`
}

// Agent is an identity as the API and CLI show it. Token is set only in
// the answer to create and rotate.
type Agent struct {
	ID         string   `json:"id"`
	Name       string   `json:"name,omitempty"`
	Scopes     []string `json:"scopes,omitempty"`
	CreatedAt  string   `json:"createdAt,omitempty"`
	DisabledAt string   `json:"disabledAt,omitempty"`
	Token      string   `json:"token,omitempty"`
	// Issuer and Subject are the OAuth identity the agent is linked to,
	// when it has one: the iss and sub of the access tokens that act as
	// it.
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	// IdentityMoved says, of a revoked agent, that an operator moved its
	// identity to another agent (kfa agent link --replace).
	IdentityMoved *IdentityMove `json:"identityMoved,omitempty"`
}

// IdentityMove is an identity an operator moved from a revoked agent:
// which (issuer, subject), to which agent, when and by whom.
type IdentityMove struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
	To      string `json:"to"`
	At      string `json:"at"`
	By      string `json:"by,omitempty"`
}

// AgentList is a page of agents, oldest first.
type AgentList struct {
	Agents        []Agent `json:"agents"`
	NextPageToken string  `json:"nextPageToken"`
	TotalSize     int     `json:"totalSize"`
}

// FromDiscussion converts a discussion; base is the public URL.
func FromDiscussion(d discussions.Discussion, base string) Discussion {
	out := Discussion{
		ID: d.ID, Title: d.Title, Body: d.Body, AuthorID: d.AuthorID, AuthorName: d.AuthorName,
		Kind: d.Kind, Product: d.Product, Environment: d.Environment, Status: string(d.Status),
		CreatedAt: ts(d.CreatedAt), AnsweredAt: ts(d.AnsweredAt), ReplyCount: d.VisibleReplies(),
		AcceptedReplyID: d.AcceptedReplyID, Hidden: d.Hidden, HiddenReplies: d.HiddenReplies,
	}
	if base != "" {
		out.URL = base + "/api/v1/discussions/" + d.ID
	}
	return out
}

// FromReply converts a reply.
func FromReply(r discussions.Reply) Reply {
	return Reply{ID: r.ID, DiscussionID: r.DiscussionID, AuthorID: r.AuthorID, AuthorName: r.AuthorName,
		Body: r.Body, CreatedAt: ts(r.CreatedAt), Hidden: r.Hidden}
}

// FromReplies converts replies, never returning nil.
func FromReplies(rs []discussions.Reply) []Reply {
	out := make([]Reply, len(rs))
	for i, r := range rs {
		out[i] = FromReply(r)
	}
	return out
}

// FromInboxEntry converts an inbox entry.
func FromInboxEntry(e discussions.InboxEntry) InboxEntry {
	out := InboxEntry{ID: e.ID, Kind: string(e.KindOf()), DiscussionID: e.DiscussionID, ReplyID: e.ReplyID, TaskIDs: e.TaskIDs,
		CreatedAt: ts(e.CreatedAt)}
	if out.TaskIDs == nil {
		out.TaskIDs = []string{}
	}
	if !e.AckedAt.IsZero() {
		s := ts(e.AckedAt)
		out.AckedAt = &s
	}
	return out
}

// FromAgent converts an agent (without a token).
func FromAgent(a agents.Agent) Agent {
	out := Agent{ID: a.ID, Name: a.Name, Scopes: a.ScopeStrings(), CreatedAt: ts(a.CreatedAt), DisabledAt: ts(a.DisabledAt),
		Issuer: a.Issuer, Subject: a.Subject}
	if m := a.Moved; m != nil {
		out.IdentityMoved = &IdentityMove{Issuer: m.Issuer, Subject: m.Subject, To: m.To, At: ts(m.At), By: m.By}
	}
	return out
}

// FromDiscussionList converts a page of discussions; base is the public
// URL their links start with ("" for none).
func FromDiscussionList(res discussions.ListResult, base string) DiscussionList {
	out := DiscussionList{Discussions: make([]Discussion, len(res.Discussions)), NextPageToken: res.NextPageToken, TotalSize: res.TotalSize}
	for i, d := range res.Discussions {
		out.Discussions[i] = FromDiscussion(d, base)
	}
	return out
}

// FromInbox converts a page of an inbox.
func FromInbox(res discussions.InboxResult) InboxList {
	out := InboxList{Entries: make([]InboxEntry, len(res.Entries)), NextPageToken: res.NextPageToken}
	for i, e := range res.Entries {
		out.Entries[i] = FromInboxEntry(e)
	}
	return out
}

// FromReplyResult is the answer of a stored reply: the reply and the
// tasks it completed.
func FromReplyResult(res discussions.ReplyResult) ReplyResponse {
	ids := res.CompletedTaskIDs
	if ids == nil {
		ids = []string{}
	}
	return ReplyResponse{Reply: FromReply(res.Reply), CompletedTasks: len(ids), CompletedIDs: ids}
}
