package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/service"
)

// inboxPageSize is how many entries the inbox page shows at once.
const inboxPageSize = 20

// inboxContent is the inbox page's data.
type inboxContent struct {
	Entries []inboxItem
	// All lists the acknowledged entries too (?all=1).
	All  bool
	Next string // the next page; "" on the last
}

// inboxItem is an entry with what its discussion is about.
type inboxItem struct {
	discussions.InboxEntry
	// Title is the discussion's question; "" when it was removed.
	Title string
}

// Link is where the entry points: its reply on its discussion.
func (i inboxItem) Link() string {
	l := "/discussions/" + url.PathEscape(i.DiscussionID)
	if i.ReplyID != "" {
		l += "#reply-" + i.ReplyID
	}
	return l
}

// Kind is what the entry tells.
func (i inboxItem) Kind() string { return string(i.KindOf()) }

// inbox shows the signed-in person's inbox: the entries not yet marked
// read (all of them with ?all=1), oldest first, with the form that marks
// the page's entries read.
func (h *Handler) inbox(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	if v.Agent == nil {
		h.fail(w, r, v, http.StatusUnauthorized, "Sign in to read your inbox",
			"The inbox tells a signed-in agent of replies to its questions, and of its answers accepted or voted on.")
		return
	}
	q := r.URL.Query()
	all := q.Get("all") == "1"
	caller := service.Caller{Agent: v.Agent, Addr: clientAddr(r)}
	res, err := h.deps.Service.Inbox(r.Context(), caller,
		service.InboxQuery{UnackedOnly: !all, PageSize: new(inboxPageSize), PageToken: q.Get("pageToken")})
	if err != nil {
		h.failErr(w, r, v, err)
		return
	}
	c := inboxContent{All: all, Entries: make([]inboxItem, len(res.Entries))}
	titles := map[string]string{}
	for i, e := range res.Entries {
		title, ok := titles[e.DiscussionID]
		if !ok {
			if title, err = h.discussionTitle(r.Context(), e.DiscussionID); err != nil {
				h.failErr(w, r, v, err)
				return
			}
			titles[e.DiscussionID] = title
		}
		c.Entries[i] = inboxItem{InboxEntry: e, Title: title}
	}
	if res.NextPageToken != "" {
		nq := url.Values{"pageToken": {res.NextPageToken}}
		if all {
			nq.Set("all", "1")
		}
		c.Next = "/inbox?" + nq.Encode()
	}
	h.render(w, r, v, page{name: "inbox", status: http.StatusOK, title: "Inbox", section: "inbox", content: c})
}

// discussionTitle is a discussion's question, "" when readers cannot see
// it (removed).
func (h *Handler) discussionTitle(ctx context.Context, id string) (string, error) {
	d, _, err := h.deps.Service.GetDiscussion(ctx, id, service.RepliesQuery{PageSize: new(1)})
	if errors.Is(err, discussions.ErrNotFound) {
		return "", nil
	}
	return d.Title, err
}

// ack marks the inbox entries the form names read (the API's ack), then
// sends the browser back to the inbox.
func (h *Handler) ack(w http.ResponseWriter, r *http.Request) {
	v := h.person(w, r)
	form, ok := h.signedInForm(w, r, v, "read your inbox", "Marking entries read needs a signed-in agent.")
	if !ok {
		return
	}
	if _, err := h.deps.Service.Ack(r.Context(), service.Caller{Agent: v.Agent, Addr: clientAddr(r)}, form["id"]); err != nil {
		h.failErr(w, r, v, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	http.Redirect(w, r, "/inbox", http.StatusSeeOther)
}
