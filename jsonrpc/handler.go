package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the binding needs.
type Deps struct {
	// Service runs every method, and authenticates the callers.
	Service         *service.Service
	Log             *slog.Logger
	MaxBodyBytes    int64
	StreamHeartbeat time.Duration
}

// Handler serves the JSON-RPC endpoint.
type Handler struct {
	deps    Deps
	methods map[string]method
}

// New returns the JSON-RPC handler.
func New(deps Deps) *Handler {
	deps.MaxBodyBytes = httpkit.BodyLimit(deps.MaxBodyBytes)
	h := &Handler{deps: deps}
	h.methods = h.methodTable()
	return h
}

// request is the JSON-RPC envelope. ID is nil when the member is absent (a
// notification) and "null" when it is null.
type request struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

var nullID = json.RawMessage("null")

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "private, no-store")
	// Until the method is known, the header says which dialect the caller
	// speaks, so that a 0.3 caller gets 0.3's error shape from the start.
	v03 := headerV03(r)
	w.Header().Add("Vary", "Authorization, X-API-Key")
	if err := httpkit.JSONContentType(r); err != nil {
		h.writeError(w, r, nullID, v03, err)
		return
	}
	body, err := httpkit.ReadBody(w, r, h.deps.MaxBodyBytes)
	if err != nil {
		h.writeError(w, r, nullID, v03, err)
		return
	}
	// The envelope is checked and decoded in one pass (a2a.Decode); its
	// params stay raw for the method's own decoding.
	var req request
	decodeErr := a2a.Decode(body, &req)
	var (
		se *a2a.SyntaxError
		sh *a2a.ShapeError
	)
	switch {
	case errors.As(decodeErr, &se):
		h.writeError(w, r, nullID, v03, a2a.Errorf(a2a.ParseError, "invalid JSON: %v", decodeErr))
		return
	case errors.As(decodeErr, &sh):
		h.writeError(w, r, nullID, v03, a2a.Errorf(a2a.InvalidRequest, "request refused: %v", decodeErr))
		return
	}
	trimmed := bytes.TrimSpace(body)
	if trimmed[0] == '[' {
		h.writeError(w, r, nullID, v03, a2a.Errorf(a2a.InvalidRequest,
			"batch requests are not supported; send one JSON-RPC request per HTTP request"))
		return
	}
	if trimmed[0] != '{' {
		h.writeError(w, r, nullID, v03, a2a.Errorf(a2a.InvalidRequest, "a JSON-RPC request must be a JSON object"))
		return
	}
	if decodeErr != nil {
		var te *json.UnmarshalTypeError
		if errors.As(decodeErr, &te) {
			decodeErr = fmt.Errorf("%s is JSON %s, not %s", te.Field, te.Value, te.Type)
		}
		h.writeError(w, r, nullID, v03, a2a.Errorf(a2a.InvalidRequest, "malformed JSON-RPC envelope: %v", decodeErr))
		return
	}
	id := req.ID
	if id != nil && !validID(id) {
		h.writeError(w, r, nullID, v03, a2a.Errorf(a2a.InvalidRequest, "id must be a string, a number or null"))
		return
	}
	replyID := id
	if replyID == nil {
		replyID = nullID
	}
	if req.JSONRPC == nil || *req.JSONRPC != "2.0" {
		h.writeError(w, r, replyID, v03, a2a.Errorf(a2a.InvalidRequest, `jsonrpc must be "2.0"`))
		return
	}
	if req.Method == nil || *req.Method == "" {
		h.writeError(w, r, replyID, v03, a2a.Errorf(a2a.InvalidRequest, "method is required"))
		return
	}
	name := *req.Method
	m, ok := h.methods[name]
	if !ok {
		h.writeError(w, r, replyID, v03, a2a.Errorf(a2a.MethodNotFound, "method %q not found", httpkit.Truncate(name, 64)).
			With("method", httpkit.Truncate(name, 64)))
		return
	}
	if err := checkVersion(r); err != nil {
		h.writeError(w, r, replyID, m.v03, err)
		return
	}
	if len(req.Params) > 0 && !bytes.Equal(bytes.TrimSpace(req.Params), []byte("null")) && !a2a.IsObject(req.Params) {
		h.writeError(w, r, replyID, m.v03, a2a.Errorf(a2a.InvalidParams, "params must be a JSON object"))
		return
	}
	if string(bytes.TrimSpace(req.Params)) == "null" {
		req.Params = nil
	}
	c, err := h.caller(r, m)
	if m.open != nil {
		h.serveStream(w, r, m, id, c, req.Params, err)
		return
	}
	var result any
	if err == nil {
		result, err = m.call(r.Context(), c, req.Params)
	}
	if err != nil && m.mapErr != nil {
		err = m.mapErr(err)
	}
	if id == nil { // a notification: it ran; it gets no body
		if err != nil {
			h.logFailure(r, err)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		h.writeError(w, r, id, m.v03, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, response{JSONRPC: "2.0", ID: id, Result: result})
}

// serveStream answers a streaming method with Server-Sent Events, each
// data line a JSON-RPC response with the request's id. authErr is the
// caller's authentication failure, if any.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request, m method, id json.RawMessage, c service.Caller, params json.RawMessage, authErr error) {
	var st *service.Stream
	err := authErr
	if err == nil {
		st, err = m.open(r.Context(), c, params, r.Header.Get("Last-Event-ID"))
	}
	if id == nil { // a notification runs, but a stream to no one is pointless
		if err == nil {
			st.Close()
		} else {
			h.logFailure(r, err)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		// The official clients read a streaming answer as SSE only, so the
		// error travels as the stream's one event.
		e := service.ToError(err)
		httpkit.SetErrorHeaders(w.Header(), e)
		httpkit.LogFailure(r, h.deps.Log, err, e)
		sse := httpkit.StartSSE(w)
		_ = sse.Data(errorResponse{JSONRPC: "2.0", ID: id, Error: toRPCError(e, m.v03)})
		return
	}
	defer st.Close()
	sse := httpkit.StartSSE(w)
	httpkit.Pump(r.Context(), sse, st.Events(), h.deps.StreamHeartbeat, func(ev service.Event) error {
		var result any = ev.Resp
		if m.v03 {
			result = ev.Resp.ToV03()
		}
		return sse.Event(ev.ID, response{JSONRPC: "2.0", ID: id, Result: result})
	})
}

// writeError answers err as a JSON-RPC error object with HTTP 200.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, id json.RawMessage, v03 bool, err error) {
	e := service.ToError(err)
	httpkit.LogFailure(r, h.deps.Log, err, e)
	httpkit.SetErrorHeaders(w.Header(), e)
	httpkit.WriteJSON(w, http.StatusOK, errorResponse{JSONRPC: "2.0", ID: id, Error: toRPCError(e, v03)})
}

func (h *Handler) logFailure(r *http.Request, err error) {
	httpkit.LogFailure(r, h.deps.Log, err, service.ToError(err))
}

// toRPCError is the JSON-RPC error object of e. In 1.0, data is the array
// of typed details (ErrorInfo first); 0.3 clients expect a free-form
// object, so they get the ErrorInfo's fields.
func toRPCError(e *a2a.Error, v03 bool) rpcError {
	out := rpcError{Code: e.Kind.RPCCode, Message: e.Message}
	if !v03 {
		out.Data = e.Details()
		return out
	}
	data := map[string]any{"reason": e.Kind.Reason, "domain": a2a.ErrorDomain}
	if len(e.Metadata) > 0 {
		data["metadata"] = e.Metadata
	}
	if len(e.Violations) > 0 {
		data["fieldViolations"] = e.Violations
	}
	if e.RetryAfter > 0 {
		data["retryAfterSeconds"] = a2a.RetryAfterSeconds(e.RetryAfter)
	}
	out.Data = data
	return out
}

// requestVersion is the request's A2A-Version: the header, or else the
// query parameter.
func requestVersion(r *http.Request) string {
	if v := r.Header.Get(a2a.VersionHeader); v != "" {
		return v
	}
	return r.URL.Query().Get(a2a.VersionHeader)
}

// headerV03 reports whether the request's A2A-Version names 0.3, which
// an absent one does.
func headerV03(r *http.Request) bool {
	return a2a.NormalizeVersion(requestVersion(r)) == a2a.Version03
}

// checkVersion applies A2A-Version on this endpoint: 1.0 and 0.3 are
// served (an absent header means 0.3); the method name decides the shapes.
func checkVersion(r *http.Request) error {
	v := requestVersion(r)
	switch a2a.NormalizeVersion(v) {
	case a2a.Version10, a2a.Version03:
		return nil
	}
	return a2a.Errorf(a2a.VersionNotSupported, "A2A-Version %q is not supported; this endpoint serves 1.0 and 0.3", httpkit.Truncate(v, 32)).
		With("supportedVersions", "1.0,0.3")
}

// validID reports whether raw is a JSON string, number or null.
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == 'n', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}
