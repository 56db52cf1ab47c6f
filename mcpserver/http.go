package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Authenticator resolves a request's credential to its caller, the way
// every surface does; *service.Service is one.
type Authenticator interface {
	Authenticate(ctx context.Context, cred service.Credential, required bool) (service.Caller, error)
}

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// Auth resolves an optional bearer token: a bad one is refused with 401
	// and WWW-Authenticate, and costs the address one failed attempt. Nil
	// serves every request anonymously, whatever credential it sends.
	Auth Authenticator
	// AllowedOrigins are the Origin values a request may carry (scheme,
	// host and port, as a browser sends them). A request with any other
	// Origin is refused with 403, so that a web page cannot drive the
	// server (DNS rebinding); a request without Origin (every non-browser
	// client) passes. Empty, the allowed origins are kfa's own: that of
	// PublicURL, and the loopback origins of ListenAddr's port when it is
	// a loopback address.
	AllowedOrigins []string
	// PublicURL is the server's externally visible base URL; its origin is
	// allowed when AllowedOrigins is empty.
	PublicURL string
	// ListenAddr returns the public listener's address (nil before it
	// listens); read at each request, since the port of :0 is known only
	// once the server listens.
	ListenAddr func() net.Addr
	// MaxBodyBytes bounds request bodies; larger ones get 413.
	MaxBodyBytes int64
	// Log receives the SDK's transport errors; discarded when nil.
	Log *slog.Logger
}

// Handler serves an MCP server over Streamable HTTP, stateless: every POST
// stands alone, so no session is needed to call a tool, and GET and
// DELETE are answered 405. The answer is JSON or an SSE stream, whichever
// the client's Accept prefers (JSON on a tie).
type Handler struct {
	o       HTTPOptions
	origins *originPolicy
	json    http.Handler
	sse     http.Handler
}

// NewHandler returns the HTTP handler of srv.
func NewHandler(srv *mcp.Server, o HTTPOptions) *Handler {
	o.MaxBodyBytes = httpkit.BodyLimit(o.MaxBodyBytes)
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{o: o, origins: newOriginPolicy(o.AllowedOrigins, o.PublicURL, o.ListenAddr)}
	get := func(*http.Request) *mcp.Server { return srv }
	for _, jsonResponse := range []bool{true, false} {
		sh := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: jsonResponse,
			Logger:       o.Log,
			// The Origin check below is the DNS-rebinding protection; the
			// SDK's Host check would refuse every request a reverse proxy
			// forwards to a loopback listener with the public host name.
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        o.MaxBodyBytes,
		})
		if jsonResponse {
			h.json = sh
		} else {
			h.sse = sh
		}
	}
	return h
}

// ServeHTTP checks the request kfa's way (Origin, bearer, body), then lets
// the SDK serve it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	// whoami depends on the credential: never cached, never shared.
	hdr.Set("Cache-Control", "no-store")
	hdr.Add("Vary", "Authorization, X-API-Key")
	hdr.Set("X-Content-Type-Options", "nosniff")

	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		if len(origins) > 1 || !h.origins.allows(origins[0]) {
			writeRPCError(w, http.StatusForbidden, nil, a2a.InvalidRequest.RPCCode,
				"Origin "+quoteOrigin(origins)+" is not allowed to use this MCP endpoint: "+h.origins.rule(), nil)
			return
		}
	}
	// The body is read first, so that an error can name the request it
	// answers (clients match answers to requests by id).
	var id json.RawMessage
	if r.Method == http.MethodPost {
		body, err := httpkit.ReadBody(w, r, h.o.MaxBodyBytes)
		if err != nil {
			h.writeError(w, r, nil, err)
			return
		}
		// The SDK checks the protocol version's batch rule itself.
		if e := CheckMessage(body, true); e != nil {
			writeRPCError(w, http.StatusBadRequest, e.ID, e.Code, e.Message, nil)
			return
		}
		id = requestID(body)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	caller, err := h.caller(r)
	if err != nil {
		h.writeError(w, r, id, err)
		return
	}
	sse, ok := preferSSE(r.Header.Values("Accept"))
	if !ok {
		writeRPCError(w, http.StatusNotAcceptable, id, a2a.InvalidRequest.RPCCode,
			"this endpoint answers application/json or text/event-stream; the Accept header allows neither", nil)
		return
	}
	// The SDK insists on both; the choice is made above.
	r.Header.Set("Accept", "application/json, text/event-stream")
	st := &requestState{caller: caller}
	r = r.WithContext(withState(r.Context(), st))
	rw := &responseWriter{ResponseWriter: w, st: st, id: id, version: r.Header.Get("MCP-Protocol-Version")}
	if sse {
		h.sse.ServeHTTP(rw, r)
	} else {
		h.json.ServeHTTP(rw, r)
	}
	rw.finish()
}

func quoteOrigin(values []string) string {
	return `"` + httpkit.Truncate(strings.Join(values, ", "), 128) + `"`
}

// writeError answers err, an A2A error of the shared toolkit (a refused
// credential, a limit, a body too large), with its HTTP status and
// headers (WWW-Authenticate, Retry-After) and a JSON-RPC error body.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, id json.RawMessage, err error) {
	e := httpkitError(r, h.o.Log, err)
	httpkit.SetErrorHeaders(w.Header(), e)
	data := map[string]any{"reason": e.Kind.Reason}
	if e.Kind == a2a.RateLimited {
		data["retryAfterSeconds"] = a2a.RetryAfterSeconds(e.RetryAfter)
	}
	writeRPCError(w, e.Kind.HTTPStatus, id, e.Kind.RPCCode, e.Message, data)
}

// rpcError is a JSON-RPC error response written by kfa rather than the
// SDK: its id is null when the request's is not known.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string, data any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	httpkit.WriteJSON(w, status, rpcError{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{Code: code, Message: msg, Data: data}})
}

// requestID is the id of a single JSON-RPC request, or nil (a batch, a
// notification, an id that is neither a string nor a number).
func requestID(body []byte) json.RawMessage {
	// A map: its keys match exactly, as the SDK's decoder does ("ID" is
	// not the id).
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	if id := m["id"]; len(id) > 0 && string(id) != "null" && validID(id) {
		return id
	}
	return nil
}

// caller resolves the request's optional credential through Auth, and
// tells the access log which agent called.
func (h *Handler) caller(r *http.Request) (service.Caller, error) {
	if h.o.Auth == nil {
		return service.Caller{Addr: httpkit.ClientAddr(r)}, nil
	}
	tok, sent, err := httpkit.Credential(r)
	c, err := h.o.Auth.Authenticate(r.Context(),
		service.Credential{Token: tok, Sent: sent, Err: err, Addr: httpkit.ClientAddr(r)}, false)
	if c.Agent != nil {
		httpkit.NoteAgent(r.Context(), c.Agent.ID)
	}
	return c, err
}
