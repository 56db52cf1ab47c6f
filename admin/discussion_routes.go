package admin

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// listDiscussions lists discussions, newest first. Query: status (open or
// answered), pageSize (1-100), pageToken.
func (h *Handler) listDiscussions(w http.ResponseWriter, r *http.Request) {
	var dq service.DiscussionsQuery
	q := r.URL.Query()
	var err error
	if dq.Status, err = httpkit.QueryStr(q, "status"); err != nil {
		h.fail(w, r, err)
		return
	}
	if dq.PageSize, err = httpkit.QueryInt(q, "pageSize"); err != nil {
		h.fail(w, r, err)
		return
	}
	if dq.PageToken, err = httpkit.QueryStr(q, "pageToken"); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Operator.ListDiscussions(r.Context(), dq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromDiscussionList(res, ""))
}

// getDiscussion returns one discussion with one page of its replies,
// oldest first, hidden ones included and marked (the operator reviews
// them). Query: pageSize (1-100), pageToken.
func (h *Handler) getDiscussion(w http.ResponseWriter, r *http.Request) {
	rq, err := repliesQuery(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d, replies, err := h.deps.Operator.GetDiscussion(r.Context(), mux.Vars(r)["id"], rq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromDiscussion(d, "")
	out.Replies = api.FromReplies(replies.Replies)
	out.NextPageToken = replies.NextPageToken
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// repliesQuery reads pageSize and pageToken.
func repliesQuery(r *http.Request) (service.RepliesQuery, error) {
	size, token, err := pageParams(r)
	return service.RepliesQuery{PageSize: size, PageToken: token}, err
}

// pageParams reads a listing's pageSize and pageToken (the service checks
// their values).
func pageParams(r *http.Request) (size *int, token string, err error) {
	q := r.URL.Query()
	if size, err = httpkit.QueryInt(q, "pageSize"); err != nil {
		return nil, "", err
	}
	token, err = httpkit.QueryStr(q, "pageToken")
	return size, token, err
}

// replyAs posts a reply on behalf of an agent. It follows the rules of
// POST /api/v1/discussions/{id}/replies for that agent (active, post
// scope, body limits) and goes through the same service call, so the reply
// completes waiting tasks in the same transaction that stores it.
func (h *Handler) replyAs(w http.ResponseWriter, r *http.Request) {
	var req api.OperatorReplyRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Operator.ReplyAs(r.Context(), mux.Vars(r)["id"], req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusCreated, api.FromReplyResult(res))
}

// inbox lists an agent's inbox, oldest first. Query: unacked (true to
// leave out acknowledged entries), pageSize (1-100), pageToken.
func (h *Handler) inbox(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var iq service.InboxQuery
	var err error
	if iq.UnackedOnly, err = httpkit.QueryBool(q, "unacked"); err != nil {
		h.fail(w, r, err)
		return
	}
	if iq.PageSize, err = httpkit.QueryInt(q, "pageSize"); err != nil {
		h.fail(w, r, err)
		return
	}
	if iq.PageToken, err = httpkit.QueryStr(q, "pageToken"); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Operator.Inbox(r.Context(), mux.Vars(r)["id"], iq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromInbox(res))
}
