package admin

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/httpjson"
	"github.com/kfa-project/kfa/store"
)

// Store is what the day-2 routes need of the database.
type Store interface {
	// Stats describes the file and counts its contents.
	Stats() (store.Stats, error)
	// Check verifies bbolt's structure and kfa's invariants.
	Check(ctx context.Context) (store.CheckReport, error)
	// Backup writes a consistent copy of the file to w, telling size the
	// byte count first.
	Backup(w io.Writer, size func(int64)) (int64, error)
}

// opsRoutes are stats, check and backup.
func (h *Handler) opsRoutes(r *mux.Router) {
	r.HandleFunc("/admin/v1/stats", h.needStore(h.stats)).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/check", h.needStore(h.check)).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/backup", h.needStore(h.backup)).Methods(http.MethodGet)
}

// needStore answers 503 when the handler was built without a Store.
func (h *Handler) needStore(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.deps.Store == nil {
			h.fail(w, r, a2a.Errorf(a2a.Unavailable, "%s is not available: this admin handler has no store", r.URL.Path))
			return
		}
		next(w, r)
	}
}

func (h *Handler) stats(w http.ResponseWriter, r *http.Request) {
	st, err := h.deps.Store.Stats()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.Stats{
		Database: api.DatabaseStats{Path: st.Path, SchemaVersion: st.SchemaVersion, SizeBytes: st.SizeBytes,
			PageSize: st.PageSize, FreePages: st.FreePages, PendingPages: st.PendingPages},
		Tasks: api.TaskStats{Total: st.Tasks, ByState: map[string]int{
			string(a2a.TaskStateWorking): 0, string(a2a.TaskStateCompleted): 0, string(a2a.TaskStateCanceled): 0,
		}},
		Discussions:  api.DiscussionStats{Total: st.Discussions, Open: st.Open, Answered: st.Answered},
		Agents:       st.Agents,
		Records:      st.Records,
		FeedSequence: st.FeedSequence,
	}
	for s, n := range st.TasksByState {
		out.Tasks.ByState[string(s)] = n
	}
	if o := st.OldestWaiting; o != nil {
		out.Tasks.OldestWaiting = &api.WaitingTask{ID: o.ID, OwnerID: o.OwnerID, Since: a2a.FormatTime(o.Since)}
	}
	if h.deps.IndexLag != nil {
		lag, err := h.deps.IndexLag(r.Context())
		if err != nil {
			h.fail(w, r, err)
			return
		}
		out.IndexLag = &lag
	}
	httpjson.WriteJSON(w, http.StatusOK, out)
}

// check runs kfa check. It answers 200 whatever it finds; the report says
// whether the store is sound.
func (h *Handler) check(w http.ResponseWriter, r *http.Request) {
	rep, err := h.deps.Store.Check(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpjson.WriteJSON(w, http.StatusOK, FromCheckReport(rep))
}

// FromCheckReport converts a store report to its JSON shape.
func FromCheckReport(rep store.CheckReport) api.CheckReport {
	out := api.CheckReport{OK: rep.OK(), Path: rep.Path, SchemaVersion: rep.SchemaVersion, Examined: rep.Examined,
		Violations: make([]api.Violation, len(rep.Violations)), Truncated: rep.Truncated, Notes: rep.Notes}
	if out.Examined == nil {
		out.Examined = map[string]int{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for i, v := range rep.Violations {
		out.Violations[i] = api.Violation{Kind: v.Kind, Bucket: v.Bucket, Key: v.Key, KeyHex: v.KeyHex, TaskID: v.TaskID, Detail: v.Detail}
	}
	return out
}

// backup streams a consistent copy of the database file. Content-Length
// is the exact size, so a client notices a stream cut short; a failure
// after the first byte aborts the connection for the same reason.
func (h *Handler) backup(w http.ResponseWriter, r *http.Request) {
	started := false
	n, err := h.deps.Store.Backup(w, func(size int64) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		started = true
	})
	if err == nil {
		return
	}
	if !started {
		h.fail(w, r, err)
		return
	}
	h.deps.Log.Error("backup stream failed", "bytes", n, "err", err)
	panic(http.ErrAbortHandler)
}
