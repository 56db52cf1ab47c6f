package apiv1

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

// ListDiscussions lists public discussions, newest first.
func (h *Handler) ListDiscussions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	statusStr, err := httpkit.QueryStr(q, "status")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status, err := discussions.ParseStatusFilter(statusStr)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := httpkit.QueryInt(q, "pageSize", "page_size")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := httpkit.QueryStr(q, "pageToken", "page_token")
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
	httpkit.PublicRead(w)
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// GetDiscussion returns one discussion with one page of its replies,
// oldest first (pageSize, pageToken).
func (h *Handler) GetDiscussion(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := httpkit.QueryInt(q, "pageSize", "page_size")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := httpkit.QueryStr(q, "pageToken", "page_token")
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
	d, replies, err := h.deps.Discussions.Get(r.Context(), httpkit.PathVar(r, "id"), n, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromDiscussion(d, h.deps.PublicURL)
	out.Replies = api.FromReplies(replies.Replies)
	out.NextPageToken = replies.NextPageToken
	httpkit.PublicRead(w)
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// PostReply stores a reply; a qualifying one completes the waiting tasks.
func (h *Handler) PostReply(w http.ResponseWriter, r *http.Request) {
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
	if err := httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Body == nil {
		h.fail(w, r, a2a.BadParam("body", "is required"))
		return
	}
	id := httpkit.PathVar(r, "id")
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

// ListInbox lists the caller's inbox, oldest first.
func (h *Handler) ListInbox(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	unacked, err := httpkit.QueryBool(q, "unacked")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := httpkit.QueryInt(q, "pageSize", "page_size")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := httpkit.QueryStr(q, "pageToken", "page_token")
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

// AckInbox acknowledges inbox entries. It changes no task.
func (h *Handler) AckInbox(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req api.AckRequest
	if err := httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, &req); err != nil {
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

// Whoami answers the calling credential's agent.
func (h *Handler) Whoami(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromAgent(*c.Agent))
}
