package httpjson

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the handlers need.
type Deps struct {
	Service     *service.Service
	Discussions *discussions.Service
	Log         *slog.Logger
	// PublicURL is the externally visible base URL (no trailing slash).
	PublicURL string
	// MaxBodyBytes bounds request bodies; larger ones get 413.
	MaxBodyBytes int64
	// CardMaxAge is the Cache-Control max-age of the agent card.
	CardMaxAge time.Duration
	// Ready reports whether the store is open; /readyz answers 503 otherwise.
	Ready func() error
	// StreamHeartbeat is the idle interval after which a stream gets a
	// keep-alive comment. Default 15s.
	StreamHeartbeat time.Duration
	// JSONRPC, when set, serves the JSON-RPC binding at /a2a/jsonrpc.
	JSONRPC http.Handler
	// MCP, when set, serves the MCP surface at /mcp (every method: the
	// handler answers those it does not serve).
	MCP http.Handler
	// Pages, when set, is the web view, served on the same router.
	Pages *Pages
	// JWKS, when set, answers GET /.well-known/jwks.json: the public keys
	// that verify the signatures of push notifications.
	JWKS func(ctx context.Context) ([]byte, error)
}

// Pages is the web view as the router sees it: its routes, and the page
// that answers unknown paths a browser asks for.
type Pages struct {
	Routes []Route
	// NotFound answers a request no route matches when WantsHTML says it
	// comes from a browser; API clients keep the JSON error.
	NotFound  http.Handler
	WantsHTML func(*http.Request) bool
}

// Route is one route another package serves on this router, in gorilla/mux
// path template syntax.
type Route struct {
	Path    string
	Methods []string
	Handler http.Handler
}

// Handler serves every public route. Build it with New.
type Handler struct {
	deps   Deps
	router *mux.Router
	// templates are the routes' path templates for metrics labels
	// (RouteTemplate), computed once.
	templates map[*mux.Route]string
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
	get, head, post, opts := http.MethodGet, http.MethodHead, http.MethodPost, http.MethodOptions
	// a2aRoute is an A2A HTTP+JSON route: private, A2A-Version 1.0 required.
	a2aRoute := func(path string, fn http.HandlerFunc, methods ...string) {
		r.Handle("/a2a/v1"+path, h.private(h.requireVersion(fn))).Methods(methods...)
	}
	// privateRoute answers depend on the caller's credential.
	privateRoute := func(path string, fn http.HandlerFunc, methods ...string) {
		r.Handle(path, h.private(fn)).Methods(methods...)
	}

	// Discovery and health: anonymous, no version header.
	r.HandleFunc("/.well-known/agent-card.json", h.card).Methods(get, head)
	r.HandleFunc("/.well-known/agent-card.json", h.preflight).Methods(opts)
	r.HandleFunc(service.Card03Path, h.card03).Methods(get, head)
	r.HandleFunc(service.LLMsPath, h.llmsTxt).Methods(get, head)
	r.HandleFunc(service.AgentsPath, h.agentsMD).Methods(get, head)
	r.HandleFunc("/a2a/info", h.info).Methods(get, head)
	r.HandleFunc("/a2a/info", h.preflight).Methods(opts)
	r.HandleFunc("/healthz", h.healthz).Methods(get, head)
	r.HandleFunc("/readyz", h.readyz).Methods(get, head)
	if deps.JWKS != nil {
		r.HandleFunc("/.well-known/jwks.json", h.jwks).Methods(get, head)
	}

	// A2A HTTP+JSON binding, v1.0. Subrouters are avoided on purpose: with
	// them gorilla/mux answers 404 instead of 405 for a wrong method.
	// The busiest routes come first (gorilla/mux tries routes in order).
	a2aRoute("/tasks/{id:[^/:]+}", h.getTask, get)
	a2aRoute("/tasks", h.listTasks, get)
	a2aRoute("/message:send", h.sendMessage, post)
	a2aRoute("/tasks/{id:[^/:]+}:cancel", h.cancelTask, post)
	a2aRoute("/message:stream", h.streamMessage, post)
	a2aRoute("/tasks/{id:[^/:]+}:subscribe", h.subscribe, get, post)
	a2aRoute("/tasks/{id:[^/:]+}/pushNotificationConfigs", h.createPushConfig, post)
	a2aRoute("/tasks/{id:[^/:]+}/pushNotificationConfigs", h.listPushConfigs, get)
	a2aRoute("/tasks/{id:[^/:]+}/pushNotificationConfigs/{cfg}", h.getPushConfig, get)
	a2aRoute("/tasks/{id:[^/:]+}/pushNotificationConfigs/{cfg}", h.deletePushConfig, http.MethodDelete)
	a2aRoute("/extendedAgentCard", h.extendedCard, get)

	// The JSON-RPC binding, at both spellings of its path.
	if deps.JSONRPC != nil {
		r.Handle("/a2a/jsonrpc", deps.JSONRPC).Methods(post)
		r.Handle("/a2a/jsonrpc/", deps.JSONRPC).Methods(post)
	}

	// The MCP surface: anonymous tools, a bearer only changes whoami.
	if deps.MCP != nil {
		r.Handle("/mcp", deps.MCP)
	}

	// kfa's own JSON API: public reads, then the credentialed routes.
	r.HandleFunc("/api/v1/discussions", h.listDiscussions).Methods(get, head)
	r.HandleFunc("/api/v1/discussions/{id}", h.getDiscussion).Methods(get, head)
	r.HandleFunc("/api/v1/discussions", h.preflight).Methods(opts)
	r.HandleFunc("/api/v1/discussions/{id}", h.preflight).Methods(opts)
	privateRoute("/api/v1/discussions/{id}/replies", h.postReply, post)
	privateRoute("/api/v1/inbox", h.listInbox, get)
	privateRoute("/api/v1/inbox:ack", h.ackInbox, post)
	privateRoute("/api/v1/whoami", h.whoami, get)

	// The web view: people's pages, after every API route.
	if deps.Pages != nil {
		for _, p := range deps.Pages.Routes {
			r.Handle(p.Path, p.Handler).Methods(p.Methods...)
		}
	}

	r.NotFoundHandler = http.HandlerFunc(h.notFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(h.methodNotAllowed)
	h.templates = routeTemplates(r)
	return h
}

// ServeHTTP wraps the router in the outer middleware: request id, panic
// recovery and the access log.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r, h.router)
}
