package httpjson

import (
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// The push notification config routes of A2A, under
// /a2a/v1/tasks/{id}/pushNotificationConfigs, and the JWKS that verifies
// the requests kfa sends.

func pathConfigID(r *http.Request) string {
	id := mux.Vars(r)["cfg"]
	if u, err := url.PathUnescape(id); err == nil {
		return u
	}
	return id
}

// createPushConfig is A2A CreateTaskPushNotificationConfig. The body's
// taskId, when given, must name the path's task.
func (h *Handler) createPushConfig(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var in a2a.TaskPushNotificationConfig
	if err := h.readJSON(w, r, &in); err != nil {
		h.fail(w, r, err)
		return
	}
	out, err := h.deps.Service.CreatePushConfig(r.Context(), c, pathID(r), in)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// getPushConfig is A2A GetTaskPushNotificationConfig.
func (h *Handler) getPushConfig(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out, err := h.deps.Service.GetPushConfig(r.Context(), c, pathID(r), pathConfigID(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// listPushConfigs is A2A ListTaskPushNotificationConfigs.
func (h *Handler) listPushConfigs(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
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
	out, err := h.deps.Service.ListPushConfigs(r.Context(), c, pathID(r), size, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// deletePushConfig is A2A DeleteTaskPushNotificationConfig: idempotent,
// answering the empty object.
func (h *Handler) deletePushConfig(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.deps.Service.DeletePushConfig(r.Context(), c, pathID(r), pathConfigID(r)); err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, struct{}{})
}

// jwks serves the public keys that verify KFA-Signature: anonymous and
// cacheable for a few minutes (a rotated-out key stays listed for much
// longer than that).
func (h *Handler) jwks(w http.ResponseWriter, r *http.Request) {
	b, err := h.deps.JWKS(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Cache-Control", "public, max-age=300")
	hd.Set("Access-Control-Allow-Origin", "*")
	httpkit.WriteRaw(w, http.StatusOK, b)
}
