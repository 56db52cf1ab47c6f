package api

import (
	"fmt"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/peers"
)

// ChangesPage is a page of the public change feed (GET /api/v1/changes).
type ChangesPage struct {
	// Server is the serving server's public URL: the origin of every
	// entry that names none.
	Server     string   `json:"server"`
	Changes    []Change `json:"changes"`
	NextCursor string   `json:"nextCursor"`
	HasMore    bool     `json:"hasMore"`
}

// Change is one entry of the change feed.
type Change struct {
	Source     string            `json:"source"` // record, discussion
	ID         string            `json:"id"`
	Op         string            `json:"op"` // upsert, delete
	URL        string            `json:"url"`
	At         string            `json:"at"`
	Origin     *ChangeOrigin     `json:"origin,omitempty"`
	Record     *knowledge.Record `json:"record,omitempty"`
	Discussion *Thread           `json:"discussion,omitempty"`
}

// ChangeOrigin is where a document was first written, when not on the
// serving server.
type ChangeOrigin struct {
	Server string `json:"server"`
	ID     string `json:"id"`
}

// Thread is an answered discussion as the feed holds it.
type Thread struct {
	ID              string        `json:"id"`
	Title           string        `json:"title"`
	Body            string        `json:"body,omitempty"`
	AuthorName      string        `json:"authorName"`
	Kind            string        `json:"kind,omitempty"`
	Product         string        `json:"product,omitempty"`
	Environment     string        `json:"environment,omitempty"`
	Status          string        `json:"status"`
	CreatedAt       string        `json:"createdAt"`
	AnsweredAt      string        `json:"answeredAt,omitempty"`
	AcceptedReplyID string        `json:"acceptedReplyId,omitempty"`
	Replies         []ThreadReply `json:"replies"`
}

// ThreadReply is one visible reply of a Thread.
type ThreadReply struct {
	ID         string       `json:"id"`
	AuthorName string       `json:"authorName"`
	Body       string       `json:"body"`
	CreatedAt  string       `json:"createdAt"`
	Origin     *ReplyOrigin `json:"origin,omitempty"`
}

// ReplyOrigin is the server a reply was written on and its page there.
type ReplyOrigin struct {
	Server string `json:"server"`
	URL    string `json:"url,omitempty"`
}

// FromFeedPage converts a page of the feed.
func FromFeedPage(p peers.FeedPage) ChangesPage {
	out := ChangesPage{Server: p.Server, Changes: make([]Change, len(p.Changes)), NextCursor: p.Next.String(), HasMore: p.HasMore}
	for i, c := range p.Changes {
		out.Changes[i] = FromChange(c)
	}
	return out
}

// FromChange converts one entry of the feed.
func FromChange(c peers.Change) Change {
	out := Change{Source: string(c.Source), ID: c.ID, Op: string(c.Op), URL: c.URL, At: ts(c.At), Record: c.Record}
	if c.Origin != nil {
		out.Origin = &ChangeOrigin{Server: c.Origin.Server, ID: c.Origin.ID}
	}
	if t := c.Thread; t != nil {
		th := &Thread{ID: t.ID, Title: t.Title, Body: t.Body, AuthorName: t.AuthorName, Kind: t.Kind, Product: t.Product,
			Environment: t.Environment, Status: string(t.Status), CreatedAt: ts(t.CreatedAt), AnsweredAt: ts(t.AnsweredAt),
			AcceptedReplyID: t.AcceptedReplyID, Replies: make([]ThreadReply, len(t.Replies))}
		for i, r := range t.Replies {
			th.Replies[i] = ThreadReply{ID: r.ID, AuthorName: r.AuthorName, Body: r.Body, CreatedAt: ts(r.CreatedAt)}
			if r.Origin != nil {
				th.Replies[i].Origin = &ReplyOrigin{Server: r.Origin.Server, URL: r.Origin.URL}
			}
		}
		out.Discussion = th
	}
	return out
}

// ToChange reads an entry of a peer's feed back into the domain's form.
// It checks only what the conversion needs (times parse); what an entry
// may hold is peers.CheckChange's.
func ToChange(c Change) (peers.Change, error) {
	out := peers.Change{Source: peers.Source(c.Source), ID: c.ID, Op: peers.Op(c.Op), URL: c.URL, Record: c.Record}
	var err error
	if out.At, err = parseTime("at", c.At, true); err != nil {
		return peers.Change{}, err
	}
	if c.Origin != nil {
		out.Origin = &peers.Origin{Server: c.Origin.Server, ID: c.Origin.ID}
	}
	if t := c.Discussion; t != nil {
		th := &peers.Thread{ID: t.ID, Title: t.Title, Body: t.Body, AuthorName: t.AuthorName,
			Filters: discussions.Filters{Kind: t.Kind, Product: t.Product, Environment: t.Environment},
			Status:  discussions.Status(t.Status), AcceptedReplyID: t.AcceptedReplyID}
		if th.CreatedAt, err = parseTime("discussion.createdAt", t.CreatedAt, true); err != nil {
			return peers.Change{}, err
		}
		if th.AnsweredAt, err = parseTime("discussion.answeredAt", t.AnsweredAt, false); err != nil {
			return peers.Change{}, err
		}
		for i, r := range t.Replies {
			tr := peers.ThreadReply{ID: r.ID, AuthorName: r.AuthorName, Body: r.Body}
			if tr.CreatedAt, err = parseTime(fmt.Sprintf("discussion.replies[%d].createdAt", i), r.CreatedAt, true); err != nil {
				return peers.Change{}, err
			}
			if r.Origin != nil {
				tr.Origin = &peers.ReplyOrigin{Server: r.Origin.Server, URL: r.Origin.URL}
			}
			th.Replies = append(th.Replies, tr)
		}
		out.Thread = th
	}
	return out, nil
}

// parseTime reads an RFC 3339 time of field; "" is the zero time unless
// required.
func parseTime(field, s string, required bool) (time.Time, error) {
	if s == "" && !required {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: not an RFC 3339 time: %q", field, clip(s, 40))
	}
	return t.UTC(), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
