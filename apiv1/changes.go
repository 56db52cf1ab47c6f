package apiv1

import (
	"net/http"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// ListChanges serves a page of the public change feed that peers follow.
// Query: cursor (from an earlier page's nextCursor; none for the
// beginning), pageSize. Anyone may read it: it holds only what the web
// view shows anyone. It is never cached: a follower polls it.
func (h *Handler) ListChanges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cursor, err := httpkit.QueryStr(q, "cursor")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	size, err := httpkit.QueryInt(q, "pageSize", "page_size")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.deps.Service.Changes(r.Context(), cursor, size)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	httpkit.WriteJSON(w, http.StatusOK, api.FromFeedPage(p))
}
