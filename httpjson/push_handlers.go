package httpjson

import (
	"net/http"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// The push notification config routes of A2A, under
// /a2a/v1/tasks/{id}/pushNotificationConfigs.

// CreatePushConfig is A2A CreateTaskPushNotificationConfig. The body's
// taskId, when given, must name the path's task.
func (h *Binding) CreatePushConfig(w http.ResponseWriter, r *http.Request) {
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
	out, err := h.deps.Service.CreatePushConfig(r.Context(), c, httpkit.PathVar(r, "id"), in)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// GetPushConfig is A2A GetTaskPushNotificationConfig.
func (h *Binding) GetPushConfig(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out, err := h.deps.Service.GetPushConfig(r.Context(), c, httpkit.PathVar(r, "id"), httpkit.PathVar(r, "cfg"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// ListPushConfigs is A2A ListTaskPushNotificationConfigs.
func (h *Binding) ListPushConfigs(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
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
	out, err := h.deps.Service.ListPushConfigs(r.Context(), c, httpkit.PathVar(r, "id"), size, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// DeletePushConfig is A2A DeleteTaskPushNotificationConfig: idempotent,
// answering the empty object.
func (h *Binding) DeletePushConfig(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.deps.Service.DeletePushConfig(r.Context(), c, httpkit.PathVar(r, "id"), httpkit.PathVar(r, "cfg")); err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, struct{}{})
}
