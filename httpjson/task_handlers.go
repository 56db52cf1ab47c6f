package httpjson

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// sendMessage is A2A SendMessage: anonymous for search, bearer for ask.
func (h *Handler) sendMessage(w http.ResponseWriter, r *http.Request) {
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

// getTask is A2A GetTask: the owner's bearer is required.
func (h *Handler) getTask(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	hl, err := queryInt(q, "historyLength", "history_length")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	buf := getBuffer()
	defer putBuffer(buf)
	b, err := h.deps.Service.GetTaskJSON(r.Context(), c, pathID(r), hl, *buf)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	*buf = httpkit.WriteRaw(w, http.StatusOK, b)
}

// listTasks is A2A ListTasks over the caller's tasks.
func (h *Handler) listTasks(w http.ResponseWriter, r *http.Request) {
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
		if *f.dst, err = queryStr(q, f.names...); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if req.PageSize, err = queryInt(q, "pageSize", "page_size"); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.HistoryLength, err = queryInt(q, "historyLength", "history_length"); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.IncludeArtifacts, err = queryBool(q, "includeArtifacts", "include_artifacts"); err != nil {
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

// cancelTask is A2A CancelTask. The body is optional.
func (h *Handler) cancelTask(w http.ResponseWriter, r *http.Request) {
	c, err := h.caller(r, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	id := pathID(r)
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

func pathID(r *http.Request) string {
	id := mux.Vars(r)["id"]
	if u, err := url.PathUnescape(id); err == nil {
		return u
	}
	return id
}

// queryStr reads a single-valued query parameter under any of its names.
func queryStr(q url.Values, names ...string) (string, error) {
	var (
		val   string
		found bool
	)
	for _, n := range names {
		vs, ok := q[n]
		if !ok {
			continue
		}
		if found || len(vs) > 1 {
			return "", a2a.BadParam(names[0], "given more than once")
		}
		val, found = vs[0], true
	}
	return val, nil
}

func queryInt(q url.Values, names ...string) (*int, error) {
	s, err := queryStr(q, names...)
	if err != nil || s == "" {
		return nil, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, a2a.BadParam(names[0], "must be an integer, not %q", httpkit.Truncate(s, 32))
	}
	return &n, nil
}

func queryBool(q url.Values, names ...string) (bool, error) {
	s, err := queryStr(q, names...)
	if err != nil || s == "" {
		return false, err
	}
	switch strings.ToLower(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, a2a.BadParam(names[0], "must be true or false, not %q", httpkit.Truncate(s, 32))
}
