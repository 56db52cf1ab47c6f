package httpjson

import (
	"fmt"
	"net/http"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/ratelimit"
)

// publicRead marks an anonymous, credential-free response: shareable by
// caches for a few seconds and readable from any web origin.
func publicRead(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "public, max-age=5")
	w.Header().Set("Access-Control-Allow-Origin", "*")
}

// listDiscussions lists public discussions, newest first.
func (h *Handler) listDiscussions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	statusStr, err := queryStr(q, "status")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status, err := discussions.ParseStatusFilter(statusStr)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := queryInt(q, "pageSize", "page_size")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := queryStr(q, "pageToken", "page_token")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n := 0
	if size != nil {
		if n = *size; n < 1 || n > discussions.MaxPageSize {
			h.fail(w, r, a2a.BadParam("pageSize", "must be between 1 and %d", discussions.MaxPageSize))
			return
		}
	}
	res, err := h.deps.Discussions.List(r.Context(), status, n, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.DiscussionList{Discussions: make([]api.Discussion, len(res.Discussions)), NextPageToken: res.NextPageToken, TotalSize: res.TotalSize}
	for i, d := range res.Discussions {
		out.Discussions[i] = api.FromDiscussion(d, h.deps.PublicURL)
	}
	publicRead(w)
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// getDiscussion returns one discussion with one page of its replies,
// oldest first (pageSize, pageToken).
func (h *Handler) getDiscussion(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := queryInt(q, "pageSize", "page_size")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := queryStr(q, "pageToken", "page_token")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n := 0
	if size != nil {
		if n = *size; n < 1 || n > discussions.MaxPageSize {
			h.fail(w, r, a2a.BadParam("pageSize", "must be between 1 and %d", discussions.MaxPageSize))
			return
		}
	}
	d, replies, err := h.deps.Discussions.Get(r.Context(), pathID(r), n, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromDiscussion(d, h.deps.PublicURL)
	out.Replies = api.FromReplies(replies.Replies)
	out.NextPageToken = replies.NextPageToken
	publicRead(w)
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// postReply stores a reply; a qualifying one completes the waiting tasks.
func (h *Handler) postReply(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !c.Agent.Has(agents.ScopePost) {
		h.fail(w, r, a2a.Errorf(a2a.PermissionDenied, "replying needs the post scope"))
		return
	}
	var req api.ReplyRequest
	if err := h.readJSON(w, r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Body == nil {
		h.fail(w, r, a2a.BadParam("body", "is required"))
		return
	}
	id := pathID(r)
	res, err := h.deps.Discussions.Reply(r.Context(), discussions.Author{ID: c.Agent.ID, Name: c.Agent.Name}, id, *req.Body)
	// The RateLimit headers tell what is left of the reply rate (a read
	// after the write: failing it costs the headers only).
	if q, limited, qerr := h.deps.Discussions.ReplyQuota(r.Context(), c.Agent.ID); qerr == nil && limited {
		ratelimit.Note(r.Context(), q)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ids := res.CompletedTaskIDs
	if ids == nil {
		ids = []string{}
	}
	w.Header().Set("Location", fmt.Sprintf("/api/v1/discussions/%s", res.Reply.DiscussionID))
	httpkit.WriteJSON(w, http.StatusCreated, api.ReplyResponse{Reply: api.FromReply(res.Reply), CompletedTasks: len(ids), CompletedIDs: ids})
}

// listInbox lists the caller's inbox, oldest first.
func (h *Handler) listInbox(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	unacked, err := queryBool(q, "unacked")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := queryInt(q, "pageSize", "page_size")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := queryStr(q, "pageToken", "page_token")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n := 0
	if size != nil {
		if n = *size; n < 1 || n > discussions.MaxPageSize {
			h.fail(w, r, a2a.BadParam("pageSize", "must be between 1 and %d", discussions.MaxPageSize))
			return
		}
	}
	res, err := h.deps.Discussions.Inbox(r.Context(), c.Agent.ID, unacked, n, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.InboxList{Entries: make([]api.InboxEntry, len(res.Entries)), NextPageToken: res.NextPageToken}
	for i, e := range res.Entries {
		out.Entries[i] = api.FromInboxEntry(e)
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// ackInbox acknowledges inbox entries. It changes no task.
func (h *Handler) ackInbox(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req api.AckRequest
	if err := h.readJSON(w, r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Discussions.Ack(r.Context(), c.Agent.ID, req.IDs)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.AckResponse{Acked: res.Acked, AlreadyAcked: res.AlreadyAcked, NotFound: res.NotFound})
}

// whoami answers the calling credential's agent.
func (h *Handler) whoami(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromAgent(*c.Agent))
}
