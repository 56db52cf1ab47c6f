package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/tasks"
)

// taskRoutes are the operator's views of every agent's tasks, and the
// operator cancel.
func (h *Handler) taskRoutes(r *mux.Router) {
	r.HandleFunc("/admin/v1/tasks", h.listTasks).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/tasks/{id}", h.getTask).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/tasks/{id}/cancel", h.cancelTask).Methods(http.MethodPost)
}

// listTasks lists tasks of every owner, newest status timestamp first.
// Query: owner, state (a TASK_STATE_* name), contextId, since (RFC 3339,
// inclusive), pageSize (1-100), pageToken.
func (h *Handler) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var p tasks.ListParams
	var owner, state, since string
	for _, f := range []struct {
		name string
		dst  *string
	}{{"owner", &owner}, {"state", &state}, {"contextId", &p.ContextID}, {"since", &since}, {"pageToken", &p.PageToken}} {
		v, err := queryOne(q, f.name)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		*f.dst = v
	}
	if state != "" {
		st, ok := a2a.ParseTaskState(state)
		if !ok {
			h.fail(w, r, a2a.BadParam("state", "unknown task state %q (use a name such as TASK_STATE_WORKING)", state))
			return
		}
		p.State = st
	}
	if since != "" {
		t, err := a2a.ParseTime(since)
		if err != nil {
			h.fail(w, r, a2a.BadParam("since", "%q is not an RFC 3339 time such as 2026-12-02T10:30:00Z", since))
			return
		}
		p.Since = t
	}
	if len(p.ContextID) > tasks.MaxContextIDLen {
		h.fail(w, r, a2a.BadParam("contextId", "longer than %d bytes", tasks.MaxContextIDLen))
		return
	}
	n, err := queryInt(q, "pageSize")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.PageSize = n
	if owner != "" { // a mistyped id would list nothing, silently
		if _, err := h.deps.Agents.Get(r.Context(), owner); err != nil {
			h.fail(w, r, agentErr(owner, err))
			return
		}
	}
	res, err := h.deps.Tasks.List(r.Context(), owner, p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	names := h.agentNames()
	out := api.TaskList{Tasks: make([]api.Task, len(res.Tasks)), NextPageToken: res.NextPageToken, TotalSize: res.TotalSize}
	for i, t := range res.Tasks {
		out.Tasks[i] = api.FromTask(t, names(r.Context(), t.OwnerID))
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// getTask returns one task of any owner with its discussion and the first
// page of its replies.
func (h *Handler) getTask(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	t, err := h.deps.Tasks.Get(r.Context(), "", id)
	if err != nil {
		h.fail(w, r, taskErr(id, err))
		return
	}
	out := api.TaskDetail{
		Task: api.FromTask(t, h.agentNames()(r.Context(), t.OwnerID)),
		A2A:  t.Wire(tasks.FullView),
	}
	d, replies, err := h.deps.Discussions.Review(r.Context(), t.DiscussionID, 0, "")
	switch {
	case err == nil:
		ad := api.FromDiscussion(d, "")
		ad.Replies = api.FromReplies(replies.Replies)
		ad.NextPageToken = replies.NextPageToken
		out.Discussion = &ad
	case !errors.Is(err, discussions.ErrNotFound):
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// cancelTask cancels any agent's task with the owner's rules: idempotent
// on a canceled task, refused on a completed one.
func (h *Handler) cancelTask(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	t, changed, err := h.deps.Tasks.Cancel(r.Context(), "", id)
	if err != nil {
		h.fail(w, r, taskErr(id, err))
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.CancelResult{Task: api.FromTask(t, h.agentNames()(r.Context(), t.OwnerID)), Changed: changed})
}

// taskErr names the task in the errors of task operations.
func taskErr(id string, err error) error {
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return a2a.Errorf(a2a.TaskNotFound, "task %s not found", id).With("taskId", id)
	case errors.Is(err, tasks.ErrNotCancelable):
		return a2a.Errorf(a2a.TaskNotCancelable, "task %s is completed; a completed task cannot be canceled", id).With("taskId", id)
	}
	return err
}

// agentNames returns a lookup of agent names that asks the store once per
// agent: a page of tasks mostly repeats a few owners.
func (h *Handler) agentNames() func(ctx context.Context, id string) string {
	cache := map[string]string{}
	return func(ctx context.Context, id string) string {
		if n, ok := cache[id]; ok {
			return n
		}
		a, err := h.deps.Agents.Get(ctx, id)
		if err != nil {
			a.Name = "" // an unknown owner shows as its id only; kfa check reports it
		}
		cache[id] = a.Name
		return a.Name
	}
}

// queryOne returns the value of a query parameter given at most once.
func queryOne(q url.Values, name string) (string, error) {
	vs := q[name]
	if len(vs) > 1 {
		return "", a2a.BadParam(name, "given more than once")
	}
	if len(vs) == 0 {
		return "", nil
	}
	return vs[0], nil
}

// queryInt returns an integer query parameter, 0 when absent.
func queryInt(q url.Values, name string) (int, error) {
	s, err := queryOne(q, name)
	if err != nil || s == "" {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, a2a.BadParam(name, "must be an integer, not %q", s)
	}
	return n, nil
}

// queryBool returns a boolean query parameter, false when absent.
func queryBool(q url.Values, name string) (bool, error) {
	s, err := queryOne(q, name)
	if err != nil || s == "" {
		return false, err
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, a2a.BadParam(name, "must be true or false, not %q", s)
	}
	return v, nil
}
