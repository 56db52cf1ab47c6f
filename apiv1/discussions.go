package apiv1

import (
	"fmt"
	"net/http"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// ListDiscussions lists public discussions, newest first. Query: status
// (open or answered), pageSize, pageToken.
func (h *Handler) ListDiscussions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var dq service.DiscussionsQuery
	var err error
	if dq.Status, err = httpkit.QueryStr(q, "status"); err != nil {
		h.fail(w, r, err)
		return
	}
	if dq.PageSize, err = httpkit.QueryInt(q, "pageSize", "page_size"); err != nil {
		h.fail(w, r, err)
		return
	}
	if dq.PageToken, err = httpkit.QueryStr(q, "pageToken", "page_token"); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Service.ListDiscussions(r.Context(), dq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.PublicRead(w)
	httpkit.WriteJSON(w, http.StatusOK, api.FromDiscussionList(res, h.deps.PublicURL))
}

// GetDiscussion returns one discussion with one page of its replies,
// oldest first (pageSize, pageToken).
func (h *Handler) GetDiscussion(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var rq service.RepliesQuery
	var err error
	if rq.PageSize, err = httpkit.QueryInt(q, "pageSize", "page_size"); err != nil {
		h.fail(w, r, err)
		return
	}
	if rq.PageToken, err = httpkit.QueryStr(q, "pageToken", "page_token"); err != nil {
		h.fail(w, r, err)
		return
	}
	d, replies, err := h.deps.Service.GetDiscussion(r.Context(), httpkit.PathVar(r, "id"), rq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	b, err := h.deps.Service.Signals(r.Context(), service.Caller{}, d, replies.Replies)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromDiscussion(d, h.deps.PublicURL)
	out.Replies = api.FromReplies(replies.Replies)
	out.NextPageToken = replies.NextPageToken
	api.AddSignals(&out, b)
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
	var req api.ReplyRequest
	if err := httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Service.Reply(r.Context(), c, httpkit.PathVar(r, "id"), req.Body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/api/v1/discussions/%s", res.Reply.DiscussionID))
	httpkit.WriteJSON(w, http.StatusCreated, api.FromReplyResult(res))
}

// ListInbox lists the caller's inbox, oldest first. Query: unacked,
// pageSize, pageToken.
func (h *Handler) ListInbox(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	var iq service.InboxQuery
	if iq.UnackedOnly, err = httpkit.QueryBool(q, "unacked"); err != nil {
		h.fail(w, r, err)
		return
	}
	if iq.PageSize, err = httpkit.QueryInt(q, "pageSize", "page_size"); err != nil {
		h.fail(w, r, err)
		return
	}
	if iq.PageToken, err = httpkit.QueryStr(q, "pageToken", "page_token"); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Service.Inbox(r.Context(), c, iq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromInbox(res))
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
	res, err := h.deps.Service.Ack(r.Context(), c, req.IDs)
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
	a, err := h.deps.Service.Whoami(c)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromAgent(a))
}
