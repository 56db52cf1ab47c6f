package server

import (
	"log/slog"
	"net/http"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// health answers the liveness and readiness checks of the process.
type health struct {
	// ready reports whether the process serves: started, not shutting
	// down, and its store answering; /readyz answers 503 otherwise.
	ready func() error
	log   *slog.Logger
}

func (h health) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h health) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := h.ready(); err != nil {
		e := a2a.Errorf(a2a.Unavailable, "not ready: %v", err)
		httpkit.WriteError(w, r, h.log, e, e)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
