package admin

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the admin API drives.
type Deps struct {
	// Operator is the admin API's way to the domain: agents, tasks,
	// discussions, inboxes, records, the push outbox and the signing keys,
	// with their rules.
	Operator *service.Operator
	Log      *slog.Logger
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
	// Index is the search index over the records (see Indexer).
	Index Indexer
	// MCP, when set, serves the MCP tools at /admin/v1/mcp for kfa mcp
	// (stdio) while the server holds the database.
	MCP http.Handler
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
	h.routes(r)
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
	httpkit.WriteError(w, r, h.deps.Log, err, service.ToError(err))
}

func (h *Handler) ping(w http.ResponseWriter, r *http.Request) {
	p := api.Ping{Version: h.deps.Version, DataDir: h.deps.DataDir, PID: os.Getpid(), Mode: h.deps.Mode, Time: a2a.FormatTime(time.Now())}
	if h.deps.Store != nil {
		// Without its id the CLI refuses a --store it cannot match, so a
		// failed read costs nothing but that.
		if id, err := h.deps.Store.Identity(r.Context()); err == nil {
			p.Store = &id
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, p)
}

// listAgents lists agents, oldest first. Query: pageSize (1-100, default
// 50), pageToken.
func (h *Handler) listAgents(w http.ResponseWriter, r *http.Request) {
	size, token, err := pageParams(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.deps.Operator.Agents(r.Context(), size, token)
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
	var req api.CreateAgentRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := h.deps.Operator.CreateAgent(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromAgent(c.Agent)
	out.Token = c.Token
	httpkit.WriteJSON(w, http.StatusCreated, out)
}

func (h *Handler) rotateAgent(w http.ResponseWriter, r *http.Request) {
	var req api.RotateAgentRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := h.deps.Operator.RotateAgent(r.Context(), mux.Vars(r)["id"], req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.FromAgent(c.Agent)
	out.Token = c.Token
	httpkit.WriteJSON(w, http.StatusOK, out)
}

func (h *Handler) revokeAgent(w http.ResponseWriter, r *http.Request) {
	a, err := h.deps.Operator.RevokeAgent(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromAgent(a))
}

func (h *Handler) linkAgent(w http.ResponseWriter, r *http.Request) {
	var req api.LinkAgentRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	out, err := h.deps.Operator.LinkAgent(r.Context(), mux.Vars(r)["id"], req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res := api.LinkedAgent{Agent: api.FromAgent(out.Agent)}
	if out.Replaced != nil {
		was := api.FromAgent(*out.Replaced)
		res.Replaced = &was
	}
	httpkit.WriteJSON(w, http.StatusOK, res)
}
