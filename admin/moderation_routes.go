package admin

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/moderation"
)

// The operator's moderation: the review queue, hide, unhide and dismiss,
// the moderation log, and hiding everything an agent wrote. Every action
// is the operator's in the log, under the name the request gives (by).

// moderationQueue lists the items waiting for review, most flagged first.
// Query: limit (1-500, default 50).
func (h *Handler) moderationQueue(w http.ResponseWriter, r *http.Request) {
	limit, err := httpkit.QueryInt(r.URL.Query(), "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q, total, err := h.deps.Operator.ModerationQueue(r.Context(), limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromQueue(q, total))
}

// moderationLog lists the moderation log, newest first. Query: pageSize
// (1-500, default 50), pageToken.
func (h *Handler) moderationLog(w http.ResponseWriter, r *http.Request) {
	size, token, err := pageParams(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.deps.Operator.ModerationLog(r.Context(), size, token)
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
		res, err := h.deps.Operator.Moderate(r.Context(), a, req)
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
	res, err := h.deps.Operator.HideAgentContent(r.Context(), mux.Vars(r)["id"], req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, res)
}
