package httpjson

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the binding needs.
type Deps struct {
	// Service runs every operation, and authenticates the callers.
	Service *service.Service
	Log     *slog.Logger
	// MaxBodyBytes bounds request bodies; larger ones get 413.
	MaxBodyBytes int64
	// StreamHeartbeat is the idle interval after which a stream gets a
	// keep-alive comment. Default 15s.
	StreamHeartbeat time.Duration
}

// Binding is the A2A HTTP+JSON binding's handlers, one per operation.
// Build it with New; package server mounts them under /a2a/v1, each
// through Route.
type Binding struct {
	deps Deps
}

// New returns the binding.
func New(deps Deps) *Binding {
	deps.MaxBodyBytes = httpkit.BodyLimit(deps.MaxBodyBytes)
	return &Binding{deps: deps}
}

// Route is how every operation of the binding is served: its answer is
// private to the caller's credential, and the request must say
// A2A-Version: 1.0.
func (h *Binding) Route(op http.HandlerFunc) http.Handler {
	return httpkit.Private(h.requireVersion(op))
}
