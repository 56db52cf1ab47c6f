package admin

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/moderation"
)

// moderationRoutes are the operator's moderation: the review queue, hide,
// unhide and dismiss, the audit log, and hiding everything an agent
// wrote. Every action is the operator's in the log, under the name the
// request gives (by).
func (h *Handler) moderationRoutes(r *mux.Router) {
	r.HandleFunc("/admin/v1/moderation/queue", h.moderationQueue).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/moderation/log", h.moderationLog).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/moderation/hide", h.moderate(moderation.ActionHide)).Methods(http.MethodPost)
	r.HandleFunc("/admin/v1/moderation/unhide", h.moderate(moderation.ActionUnhide)).Methods(http.MethodPost)
	r.HandleFunc("/admin/v1/moderation/dismiss", h.moderate(moderation.ActionDismiss)).Methods(http.MethodPost)
	r.HandleFunc("/admin/v1/agents/{id}/hide-content", h.hideAuthor).Methods(http.MethodPost)
}

// operator is the actor of the operator's actions.
func operator(by string) moderation.Actor {
	return moderation.Actor{Kind: moderation.ActorOperator, Name: by}
}

// moderationQueue lists the items waiting for review, most flagged first.
// Query: limit (1-500, default 50).
func (h *Handler) moderationQueue(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r.URL.Query(), "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q, n, err := h.deps.Moderation.Queue(r.Context(), limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromQueue(q, n))
}

// moderationLog lists the audit log, newest first. Query: pageSize
// (1-500, default 50), pageToken.
func (h *Handler) moderationLog(w http.ResponseWriter, r *http.Request) {
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
	p, err := h.deps.Moderation.Log(r.Context(), size, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromLog(p))
}

// moderate is the handler of one action on one item.
func (h *Handler) moderate(a moderation.Action) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req api.ModerationRequest
		if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
			h.fail(w, r, err)
			return
		}
		if req.ID == "" {
			h.fail(w, r, a2a.BadParam("id", "is required: the discussion's or the reply's id"))
			return
		}
		t := moderation.Target{Kind: moderation.Kind(req.Kind), ID: req.ID}
		var (
			res moderation.Result
			err error
		)
		switch a {
		case moderation.ActionHide:
			res, err = h.deps.Moderation.Hide(r.Context(), operator(req.By), t, req.Reason)
		case moderation.ActionUnhide:
			res, err = h.deps.Moderation.Unhide(r.Context(), operator(req.By), t, req.Reason)
		default:
			res, err = h.deps.Moderation.Dismiss(r.Context(), operator(req.By), t, req.Reason)
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		httpkit.WriteJSON(w, http.StatusOK, res)
	}
}

// hideAuthor hides every discussion and reply agent {id} wrote (kfa agent
// revoke --hide-content).
func (h *Handler) hideAuthor(w http.ResponseWriter, r *http.Request) {
	var req api.HideAuthorRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	id := mux.Vars(r)["id"]
	if _, err := h.deps.Agents.Get(r.Context(), id); err != nil {
		h.fail(w, r, agentErr(id, err))
		return
	}
	res, err := h.deps.Moderation.HideAuthor(r.Context(), id, operator(req.By), req.Reason)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, res)
}
