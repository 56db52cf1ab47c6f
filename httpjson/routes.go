package httpjson

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the handlers need.
type Deps struct {
	Service     *service.Service
	Agents      *agents.Service
	Discussions *discussions.Service
	Log         *slog.Logger
	// PublicURL is the externally visible base URL (no trailing slash).
	PublicURL string
	// MaxBodyBytes bounds request bodies; larger ones get 413.
	MaxBodyBytes int64
	// CardMaxAge is the Cache-Control max-age of the agent card.
	CardMaxAge time.Duration
	// AuthFailures limits failed bearer authentications per client address;
	// nil means no limit.
	AuthFailures *ratelimit.Limiter
	// Ready reports whether the store is open; /readyz answers 503 otherwise.
	Ready func() error
}

// Handler serves every public route. Build it with New.
type Handler struct {
	deps   Deps
	router *mux.Router
}

// New returns the handler with all routes registered.
func New(deps Deps) *Handler {
	if deps.MaxBodyBytes <= 0 {
		deps.MaxBodyBytes = 256 << 10
	}
	if deps.CardMaxAge <= 0 {
		deps.CardMaxAge = 5 * time.Minute
	}
	h := &Handler{deps: deps, router: mux.NewRouter()}
	r := h.router
	r.UseEncodedPath()

	// Discovery and health: anonymous, no version header.
	r.HandleFunc("/.well-known/agent-card.json", h.card).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/.well-known/agent-card.json", h.preflight).Methods(http.MethodOptions)
	r.HandleFunc("/healthz", h.healthz).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/readyz", h.readyz).Methods(http.MethodGet, http.MethodHead)

	// A2A HTTP+JSON binding, v1.0.
	a := r.PathPrefix("/a2a/v1").Subrouter()
	a.Use(h.private, h.requireVersion)
	a.HandleFunc("/message:send", h.sendMessage).Methods(http.MethodPost)
	a.HandleFunc("/tasks", h.listTasks).Methods(http.MethodGet)
	a.HandleFunc("/tasks/{id:[^/:]+}:cancel", h.cancelTask).Methods(http.MethodPost)
	a.HandleFunc("/tasks/{id:[^/:]+}", h.getTask).Methods(http.MethodGet)
	a.HandleFunc("/extendedAgentCard", h.extendedCard).Methods(http.MethodGet)

	// kfa's own JSON API.
	pub := r.PathPrefix("/api/v1").Subrouter()
	pub.HandleFunc("/discussions", h.listDiscussions).Methods(http.MethodGet, http.MethodHead)
	pub.HandleFunc("/discussions/{id}", h.getDiscussion).Methods(http.MethodGet, http.MethodHead)
	pub.HandleFunc("/discussions", h.preflight).Methods(http.MethodOptions)
	pub.HandleFunc("/discussions/{id}", h.preflight).Methods(http.MethodOptions)
	priv := r.PathPrefix("/api/v1").Subrouter()
	priv.Use(h.private)
	priv.HandleFunc("/discussions/{id}/replies", h.postReply).Methods(http.MethodPost)
	priv.HandleFunc("/inbox", h.listInbox).Methods(http.MethodGet)
	priv.HandleFunc("/inbox:ack", h.ackInbox).Methods(http.MethodPost)
	priv.HandleFunc("/whoami", h.whoami).Methods(http.MethodGet)

	r.NotFoundHandler = http.HandlerFunc(h.notFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(h.methodNotAllowed)
	return h
}

// ServeHTTP wraps the router in the outer middleware: request id, panic
// recovery and the access log.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r, h.router)
}
