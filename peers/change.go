package peers

import (
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
)

// Source is what kind of document a feed entry is: a knowledge record
// or a discussion (the values of a search hit's source).
type Source string

// The sources of feed entries.
const (
	SourceRecord     Source = "record"
	SourceDiscussion Source = "discussion"
)

// Op is what a feed entry says of its document.
type Op string

// The operations of feed entries: the document is now this (upsert), or
// it is gone (delete: deleted, hidden or purged; a tombstone).
const (
	OpUpsert Op = "upsert"
	OpDelete Op = "delete"
)

// Origin is where a document was first written, when that is not the
// server that serves it: the origin server's public URL and the
// document's id there. A question forwarded from A to B is B's
// discussion of origin (A, A's discussion id).
type Origin struct {
	Server string
	ID     string
}

// Change is one entry of a change feed: a document as it is now, or its
// tombstone.
type Change struct {
	Source Source
	// ID is the document's id on the serving server.
	ID string
	Op Op
	// URL is the document's page on the serving server.
	URL string
	// At is when the document last changed (a record's updatedAt, a
	// discussion's newest reply or moderation change, a tombstone's
	// time).
	At time.Time
	// Origin is where the document was first written; nil for the
	// serving server itself.
	Origin *Origin
	// Record is the record of an upsert of a record.
	Record *knowledge.Record
	// Thread is the discussion of an upsert of a discussion.
	Thread *Thread
}

// Thread is a public discussion as a feed holds it: what the web view
// shows anyone, and nothing else (no author ids, no counts of hidden
// replies).
type Thread struct {
	ID         string
	Title      string
	Body       string
	AuthorName string
	discussions.Filters
	Status          discussions.Status
	CreatedAt       time.Time
	AnsweredAt      time.Time
	AcceptedReplyID string
	// Replies are the visible replies, the accepted one first, then the
	// others oldest first, within the bounds of a thread (MaxThreadReplies,
	// MaxThreadReplyBytes).
	Replies []ThreadReply
}

// ThreadReply is one visible reply of a Thread.
type ThreadReply struct {
	ID         string
	AuthorName string
	Body       string
	CreatedAt  time.Time
	// Origin is the server the reply was written on, when it came back
	// from a peer (a forwarded question's answer); nil for a local one.
	Origin *ReplyOrigin
}

// ReplyOrigin is where a reply was written: the server and its page
// there.
type ReplyOrigin struct {
	Server string
	URL    string
}

// Bounds of one thread in a feed: the search index's bounds, so a feed
// holds what a search can find.
const (
	MaxThreadReplies    = 50
	MaxThreadReplyBytes = 100_000
)

// ThreadOf is d with replies as a feed holds it: the accepted reply
// first, then the others in the order given (oldest first), stopping at
// the thread's bounds. replies are d's visible replies; accepted is the
// accepted one when d has one (it may be among replies or not). d must be
// visible. A reply that came back from a peer keeps its origin.
func ThreadOf(d discussions.Discussion, accepted *discussions.Reply, replies []discussions.Reply) Thread {
	t := Thread{
		ID: d.ID, Title: d.Title, Body: d.Body, AuthorName: d.AuthorName, Filters: d.Filters,
		Status: d.Status, CreatedAt: d.CreatedAt, AnsweredAt: d.AnsweredAt, AcceptedReplyID: d.AcceptedReplyID,
	}
	size := 0
	add := func(r discussions.Reply) bool {
		if len(t.Replies) >= MaxThreadReplies || size+len(r.Body) > MaxThreadReplyBytes {
			return false
		}
		size += len(r.Body)
		tr := ThreadReply{ID: r.ID, AuthorName: r.AuthorName, Body: r.Body, CreatedAt: r.CreatedAt}
		if r.Origin != nil {
			tr.Origin = &ReplyOrigin{Server: r.Origin.Server, URL: r.Origin.URL}
		}
		t.Replies = append(t.Replies, tr)
		return true
	}
	if accepted != nil && accepted.ID == d.AcceptedReplyID && !accepted.Hidden {
		if !add(*accepted) {
			t.AcceptedReplyID = ""
		}
	} else {
		t.AcceptedReplyID = ""
	}
	for _, r := range replies {
		if r.Hidden || r.ID == t.AcceptedReplyID {
			continue
		}
		if !add(r) {
			break
		}
	}
	return t
}

// ChangedAt is when t last changed as a feed sees it: its newest reply,
// its answer, or its creation.
func (t Thread) ChangedAt() time.Time {
	at := t.CreatedAt
	if t.AnsweredAt.After(at) {
		at = t.AnsweredAt
	}
	for _, r := range t.Replies {
		if r.CreatedAt.After(at) {
			at = r.CreatedAt
		}
	}
	return at
}
