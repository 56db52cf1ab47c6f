package admin

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/tasks"
)

// Deps are the services the admin API drives.
type Deps struct {
	Agents      *agents.Service
	Tasks       *tasks.Service
	Discussions *discussions.Service
	Moderation  *moderation.Service
	Log         *slog.Logger
	// Version and DataDir identify the process in /admin/v1/ping.
	Version string
	DataDir string
	// Mode is "server" when served by kfa serve on the socket, "direct" when
	// the CLI opened the store itself.
	Mode string

	// Store serves stats, check and backup.
	Store Store
	// IndexLag, when not nil, tells how many record changes the search
	// index has yet to apply; stats show null without it.
	IndexLag func(ctx context.Context) (int64, error)
	// Records imports, lists and deletes knowledge records; Index is the
	// search index over them (see Indexer).
	Records *knowledge.Service
	Index   Indexer
	// MCP, when set, serves the MCP tools at /admin/v1/mcp for kfa mcp
	// (stdio) while the server holds the database.
	MCP http.Handler
	// Push serves the push outbox and the signing keys.
	Push PushOps
}

// Handler serves the admin API.
type Handler struct {
	deps   Deps
	router *mux.Router
}

// maxBody bounds admin request bodies other than imports.
const maxBody = 1 << 20

// NewHandler returns the admin API with all routes registered.
func NewHandler(deps Deps) *Handler {
	h := &Handler{deps: deps, router: mux.NewRouter()}
	r := h.router
	r.HandleFunc("/admin/v1/ping", h.ping).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/agents", h.listAgents).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/agents", h.createAgent).Methods(http.MethodPost)
	r.HandleFunc("/admin/v1/agents/{id}/rotate", h.rotateAgent).Methods(http.MethodPost)
	r.HandleFunc("/admin/v1/agents/{id}/revoke", h.revokeAgent).Methods(http.MethodPost)
	h.taskRoutes(r)
	h.discussionRoutes(r)
	h.moderationRoutes(r)
	h.opsRoutes(r)
	h.recordRoutes(r)
	h.pushRoutes(r)
	if deps.MCP != nil {
		r.Handle("/admin/v1/mcp", deps.MCP)
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, a2a.Errorf(a2a.NotFound, "no admin route for %s %s (is the CLI newer than the server?)", r.Method, r.URL.Path))
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, a2a.Errorf(a2a.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	h.router.ServeHTTP(w, r)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpkit.WriteError(w, r, h.deps.Log, err)
}

// Ping identifies the process answering the admin channel.
type Ping struct {
	Version string `json:"version"`
	DataDir string `json:"dataDir"`
	PID     int    `json:"pid"`
	Mode    string `json:"mode"`
	Time    string `json:"time"`
}

func (h *Handler) ping(w http.ResponseWriter, _ *http.Request) {
	httpkit.WriteJSON(w, http.StatusOK, Ping{Version: h.deps.Version, DataDir: h.deps.DataDir, PID: os.Getpid(),
		Mode: h.deps.Mode, Time: a2a.FormatTime(time.Now())})
}

// CreateAgentRequest is the body of POST /admin/v1/agents.
type CreateAgentRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	// AllowDuplicateName lets the agent share its name with another; a
	// name another agent has is refused otherwise.
	AllowDuplicateName bool `json:"allowDuplicateName,omitempty"`
}

// RotateAgentRequest is the body of POST /admin/v1/agents/{id}/rotate.
type RotateAgentRequest struct {
	// GraceSeconds keeps the old tokens working this long; 0 ends them now.
	GraceSeconds int64 `json:"graceSeconds"`
}

// listAgents lists agents, oldest first. Query: pageSize (1-100, default
// 50), pageToken.
func (h *Handler) listAgents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := queryInt(q, "pageSize")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token, err := queryOne(q, "pageToken")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.deps.Agents.List(r.Context(), size, token)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.AgentList{Agents: make([]api.Agent, len(page.Agents)), NextPageToken: page.Next, TotalSize: page.Total}
	for i, a := range page.Agents {
		out.Agents[i] = api.FromAgent(a)
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

func (h *Handler) createAgent(w http.ResponseWriter, r *http.Request) {
	var req CreateAgentRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	scopes := make([]agents.Scope, len(req.Scopes))
	for i, s := range req.Scopes {
		scopes[i] = agents.Scope(s)
	}
	c, err := h.deps.Agents.CreateAgent(r.Context(), agents.NewAgent{Name: req.Name, Scopes: scopes,
		AllowDuplicateName: req.AllowDuplicateName})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromAgent(c.Agent)
	out.Token = c.Token
	httpkit.WriteJSON(w, http.StatusCreated, out)
}

func (h *Handler) rotateAgent(w http.ResponseWriter, r *http.Request) {
	var req RotateAgentRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.GraceSeconds < 0 {
		h.fail(w, r, a2a.BadParam("graceSeconds", "must not be negative"))
		return
	}
	c, err := h.deps.Agents.Rotate(r.Context(), mux.Vars(r)["id"], time.Duration(req.GraceSeconds)*time.Second)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromAgent(c.Agent)
	out.Token = c.Token
	httpkit.WriteJSON(w, http.StatusOK, out)
}

func (h *Handler) revokeAgent(w http.ResponseWriter, r *http.Request) {
	a, err := h.deps.Agents.Revoke(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromAgent(a))
}
