package server

import (
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// health answers the liveness and readiness checks of the process.
type health struct {
	// ready reports whether the process serves: started, not shutting
	// down, and its store answering; /readyz answers 503 otherwise.
	ready func() error
	log   *slog.Logger
	// seen is the last reason logged, so that a probe every few seconds
	// logs a change of state once, not every time.
	seen *readyState
}

// readyState is the readiness last logged.
type readyState struct {
	mu     sync.Mutex
	reason string // "" ready (or never checked)
}

// notReady is why the process does not serve. Public is what /readyz
// says: it names no user, host or port (anyone may read it, and a
// driver's connection error names all three). Detail is what the store
// said, for the operator's log.
type notReady struct {
	Public string
	Detail error
}

func (e *notReady) Error() string { return e.Public }

// Public readiness reasons.
const (
	notReadyStarting = "starting or shutting down"
	notReadyDatabase = "database unreachable"
)

// storeNotReady turns the store's Ping error into the public reason: the
// store refusing writes says why (no synchronous standby), and anything
// else is an unreachable database.
func storeNotReady(err error) *notReady {
	var r interface{ WritesRefused() string }
	if errors.As(err, &r) {
		return &notReady{Public: "no synchronous standby: " + r.WritesRefused(), Detail: err}
	}
	return &notReady{Public: notReadyDatabase, Detail: err}
}

func (h health) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h health) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	err := h.ready()
	h.note(err)
	if err != nil {
		public := notReadyDatabase
		var nr *notReady
		if errors.As(err, &nr) {
			public = nr.Public
		}
		e := a2a.Errorf(a2a.Unavailable, "not ready: %s", public)
		// Not WriteError: it would log the 503 on every probe.
		httpkit.SetErrorHeaders(w.Header(), e)
		httpkit.WriteJSON(w, e.Kind.HTTPStatus, e.Status())
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// note logs a change of readiness once: the reason and the store's detail
// when the process stops being ready (or the reason changes), and its
// return.
func (h health) note(err error) {
	if h.seen == nil || h.log == nil {
		return
	}
	reason, detail := "", ""
	if err != nil {
		var nr *notReady
		if !errors.As(err, &nr) || nr.Detail == nil {
			return // starting or stopping: the server logs that itself
		}
		reason, detail = nr.Public, nr.Detail.Error()
	}
	h.seen.mu.Lock()
	changed := reason != h.seen.reason
	was := h.seen.reason
	h.seen.reason = reason
	h.seen.mu.Unlock()
	switch {
	case !changed:
	case reason == "":
		// At the level of the failure, so that a log that shows one
		// shows the other.
		h.log.Warn("ready again", "was", was)
	default:
		h.log.Warn("not ready", "reason", reason, "detail", detail)
	}
}
