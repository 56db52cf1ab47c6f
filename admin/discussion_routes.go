package admin

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// discussionRoutes are the operator's views of discussions and inboxes,
// and the reply an operator posts on behalf of an agent.
func (h *Handler) discussionRoutes(r *mux.Router) {
	r.HandleFunc("/admin/v1/discussions", h.listDiscussions).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/discussions/{id}", h.getDiscussion).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/discussions/{id}/replies", h.replyAs).Methods(http.MethodPost)
	r.HandleFunc("/admin/v1/agents/{id}/inbox", h.inbox).Methods(http.MethodGet)
}

// listDiscussions lists discussions, newest first. Query: status (open or
// answered), pageSize (1-100), pageToken.
func (h *Handler) listDiscussions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	statusStr, err := queryOne(q, "status")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status, err := discussions.ParseStatusFilter(statusStr)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := queryInt(q, "pageSize")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := queryOne(q, "pageToken")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Discussions.List(r.Context(), status, size, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.DiscussionList{Discussions: make([]api.Discussion, len(res.Discussions)), NextPageToken: res.NextPageToken, TotalSize: res.TotalSize}
	for i, d := range res.Discussions {
		out.Discussions[i] = api.FromDiscussion(d, "")
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// getDiscussion returns one discussion with one page of its replies,
// oldest first, hidden ones included and marked (the operator reviews
// them). Query: pageSize (1-100), pageToken.
func (h *Handler) getDiscussion(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := queryInt(q, "pageSize")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := queryOne(q, "pageToken")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d, replies, err := h.deps.Discussions.Review(r.Context(), mux.Vars(r)["id"], size, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromDiscussion(d, "")
	out.Replies = api.FromReplies(replies.Replies)
	out.NextPageToken = replies.NextPageToken
	httpkit.WriteJSON(w, http.StatusOK, out)
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
	if req.AgentID == "" {
		h.fail(w, r, a2a.BadParam("agentId", "is required: the agent the reply is posted as"))
		return
	}
	if req.Body == nil {
		h.fail(w, r, a2a.BadParam("body", "is required"))
		return
	}
	a, err := h.deps.Agents.Get(r.Context(), req.AgentID)
	if err != nil {
		h.fail(w, r, agentErr(req.AgentID, err))
		return
	}
	if !a.Active() {
		h.fail(w, r, a2a.Errorf(a2a.UnsupportedOperation, "agent %s (%s) is revoked; a reply cannot be posted as a revoked agent",
			a.ID, a.Name).With("agentId", a.ID))
		return
	}
	if !a.Has(agents.ScopePost) {
		h.fail(w, r, a2a.Errorf(a2a.PermissionDenied, "agent %s (%s) has the scopes %s; replying needs the post scope",
			a.ID, a.Name, strings.Join(a.ScopeStrings(), ",")).With("agentId", a.ID))
		return
	}
	id := mux.Vars(r)["id"]
	res, err := h.deps.Discussions.Reply(r.Context(), discussions.Author{ID: a.ID, Name: a.Name}, id, *req.Body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ids := res.CompletedTaskIDs
	if ids == nil {
		ids = []string{}
	}
	httpkit.WriteJSON(w, http.StatusCreated, api.ReplyResponse{Reply: api.FromReply(res.Reply), CompletedTasks: len(ids), CompletedIDs: ids})
}

// inbox lists an agent's inbox, oldest first. Query: unacked (true to
// leave out acknowledged entries), pageSize (1-100), pageToken.
func (h *Handler) inbox(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if _, err := h.deps.Agents.Get(r.Context(), id); err != nil {
		h.fail(w, r, agentErr(id, err))
		return
	}
	q := r.URL.Query()
	unacked, err := queryBool(q, "unacked")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := queryInt(q, "pageSize")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := queryOne(q, "pageToken")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Discussions.Inbox(r.Context(), id, unacked, size, token)
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

func agentErr(id string, err error) error {
	if errors.Is(err, agents.ErrNotFound) {
		return a2a.Errorf(a2a.NotFound, "agent %s not found", id).With("agentId", id)
	}
	return err
}
