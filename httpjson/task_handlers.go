package httpjson

import (
	"net/http"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// SendMessage is A2A SendMessage: anonymous for search, bearer for ask.
func (h *Binding) SendMessage(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req a2a.SendMessageRequest
	if err := h.readJSON(w, r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.deps.Service.SendMessage(r.Context(), c, &req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, resp)
}

// GetTask is A2A GetTask: the owner's bearer is required.
func (h *Binding) GetTask(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	hl, err := httpkit.QueryInt(q, "historyLength", "history_length")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	buf := getBuffer()
	defer putBuffer(buf)
	b, err := h.deps.Service.GetTaskJSON(r.Context(), c, httpkit.PathVar(r, "id"), hl, *buf)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	*buf = httpkit.WriteRaw(w, http.StatusOK, b)
}

// ListTasks is A2A ListTasks over the caller's tasks.
func (h *Binding) ListTasks(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	var req service.ListTasksRequest
	for _, f := range []struct {
		dst   *string
		names []string
	}{
		{&req.ContextID, []string{"contextId", "context_id"}},
		{&req.Status, []string{"status"}},
		{&req.PageToken, []string{"pageToken", "page_token"}},
		{&req.StatusTimestampAfter, []string{"statusTimestampAfter", "status_timestamp_after"}},
	} {
		if *f.dst, err = httpkit.QueryStr(q, f.names...); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if req.PageSize, err = httpkit.QueryInt(q, "pageSize", "page_size"); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.HistoryLength, err = httpkit.QueryInt(q, "historyLength", "history_length"); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.IncludeArtifacts, err = httpkit.QueryBool(q, "includeArtifacts", "include_artifacts"); err != nil {
		h.fail(w, r, err)
		return
	}
	buf := getBuffer()
	defer putBuffer(buf)
	b, err := h.deps.Service.ListTasksJSON(r.Context(), c, req, *buf)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	*buf = httpkit.WriteRaw(w, http.StatusOK, b)
}

// CancelTask is A2A CancelTask. The body is optional.
func (h *Binding) CancelTask(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	id := httpkit.PathVar(r, "id")
	body, err := h.readBody(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The body is optional; JSON null counts as none (the official Go SDK
	// sends null for a cancel without metadata).
	if b := strings.TrimSpace(string(body)); b != "" && b != "null" {
		if err := httpkit.JSONContentType(r); err != nil {
			h.fail(w, r, err)
			return
		}
		var req a2a.CancelTaskRequest
		if err := httpkit.DecodeJSON(body, &req); err != nil {
			h.fail(w, r, err)
			return
		}
		if req.ID != "" && req.ID != id {
			h.fail(w, r, a2a.BadParam("id", "the body names task %q but the path names %q", httpkit.Truncate(req.ID, 64), httpkit.Truncate(id, 64)))
			return
		}
	}
	t, err := h.deps.Service.CancelTask(r.Context(), c, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, t)
}
