package admin

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/tasks"
)

// listTasks lists tasks of every owner, newest status timestamp first.
// Query: owner, state (a TASK_STATE_* name), contextId, since (RFC 3339,
// inclusive), pageSize (1-100), pageToken.
func (h *Handler) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var tq service.TasksQuery
	for _, f := range []struct {
		name string
		dst  *string
	}{{"owner", &tq.Owner}, {"state", &tq.State}, {"contextId", &tq.ContextID}, {"since", &tq.Since}, {"pageToken", &tq.PageToken}} {
		v, err := httpkit.QueryStr(q, f.name)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		*f.dst = v
	}
	var err error
	if tq.PageSize, err = httpkit.QueryInt(q, "pageSize"); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Operator.Tasks(r.Context(), tq)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.TaskList{Tasks: make([]api.Task, len(res.Tasks)), NextPageToken: res.NextPageToken, TotalSize: res.TotalSize}
	for i, t := range res.Tasks {
		out.Tasks[i] = api.FromTask(t, res.OwnerNames[t.OwnerID])
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// getTask returns one task of any owner with its discussion and the first
// page of its replies.
func (h *Handler) getTask(w http.ResponseWriter, r *http.Request) {
	t, err := h.deps.Operator.Task(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.TaskDetail{Task: api.FromTask(t.Task, t.OwnerName), A2A: t.Task.Wire(tasks.FullView)}
	if t.Discussion != nil {
		ad := api.FromDiscussion(*t.Discussion, "")
		ad.Replies = api.FromReplies(t.Replies.Replies)
		ad.NextPageToken = t.Replies.NextPageToken
		out.Discussion = &ad
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// cancelTask cancels any agent's task with the owner's rules: idempotent
// on a canceled task, refused on a completed one.
func (h *Handler) cancelTask(w http.ResponseWriter, r *http.Request) {
	c, err := h.deps.Operator.CancelTask(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.CancelResult{Task: api.FromTask(c.Task, c.OwnerName), Changed: c.Changed})
}
