package apiv1

import (
	"log/slog"
	"net/http"

	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the handlers need.
type Deps struct {
	// Service answers every request, and authenticates the callers.
	Service *service.Service
	Log     *slog.Logger
	// PublicURL is the externally visible base URL (no trailing slash).
	PublicURL string
	// MaxBodyBytes bounds request bodies; larger ones get 413.
	MaxBodyBytes int64
}

// Handler serves /api/v1. Build it with New.
type Handler struct{ deps Deps }

// New returns the handler.
func New(deps Deps) *Handler {
	deps.MaxBodyBytes = httpkit.BodyLimit(deps.MaxBodyBytes)
	return &Handler{deps: deps}
}

// fail writes err as an A2A error response.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpkit.WriteError(w, r, h.deps.Log, err, service.ToError(err))
}

// caller resolves the request's credential through the service, and
// tells the access log which agent called.
func (h *Handler) caller(r *http.Request, required bool) (service.Caller, error) {
	tok, sent, err := httpkit.Credential(r)
	c, err := h.deps.Service.Authenticate(r.Context(),
		service.Credential{Token: tok, Sent: sent, Err: err, Addr: httpkit.ClientAddr(r)}, required)
	if c.Agent != nil {
		httpkit.NoteAgent(r.Context(), c.Agent.ID)
	}
	return c, err
}
