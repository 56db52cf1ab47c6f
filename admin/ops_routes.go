package admin

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// Store is what the day-2 routes need of the database, in the API's
// shapes (this package never imports the store itself).
type Store interface {
	// Stats describes the file and counts its contents.
	Stats() (api.Stats, error)
	// Check verifies kfa's invariants, and bbolt's structure with pages
	// (which holds writes back while it runs).
	Check(ctx context.Context, pages bool) (api.CheckReport, error)
	// Backup writes a consistent copy of the file to w, telling size the
	// byte count first.
	Backup(w io.Writer, size func(int64)) (int64, error)
	// Identity says which database this is (for /admin/v1/ping).
	Identity(ctx context.Context) (api.StoreIdentity, error)
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
	out, err := h.deps.Store.Stats()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.deps.IndexLag != nil {
		lag, err := h.deps.IndexLag(r.Context())
		if err != nil {
			h.fail(w, r, err)
			return
		}
		out.IndexLag = &lag
	}
	if ps, err := h.deps.Operator.Peers(r.Context()); err == nil && len(ps) > 0 {
		out.Peers = api.FromPeers(ps, h.deps.Operator.Now()).Peers
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

// check runs kfa check. It answers 200 whatever it finds; the report says
// whether the store is sound. Query: pages=true adds bbolt's page check,
// which holds a server's writes back while it runs; the CLI's own store
// (mode direct), which no one else writes to, always gets it.
func (h *Handler) check(w http.ResponseWriter, r *http.Request) {
	pages, err := httpkit.QueryBool(r.URL.Query(), "pages")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rep, err := h.deps.Store.Check(r.Context(), pages || h.deps.Mode == "direct")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, rep)
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
