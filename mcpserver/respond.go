package mcpserver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// httpkitError maps err to its A2A error and logs it when it is the
// server's fault.
func httpkitError(r *http.Request, log *slog.Logger, err error) *a2a.Error {
	e := service.ToError(err)
	httpkit.LogFailure(r, log, err, e)
	return e
}

// responseWriter stands between the SDK and the client. It turns the
// answer of a call a limit refused into HTTP 429 with Retry-After, the
// SDK's plain-text transport errors (a wrong Content-Type, a malformed
// message, a method other than POST) into JSON-RPC error bodies, so that
// every error a client reads has the same shape, and each JSON-RPC
// message into what the request's protocol version reads
// (AdaptResponse).
type responseWriter struct {
	http.ResponseWriter
	st      *requestState
	id      json.RawMessage // of the request, for a rewritten error
	version string          // the request's MCP-Protocol-Version

	mu      sync.Mutex
	wrote   bool
	status  int           // of a captured error
	capture *bytes.Buffer // a plain-text error body, rewritten by finish
	sse     bool          // the answer is an event stream, adapted line by line
	held    []byte        // JSON not yet written: a whole answer, or a partial SSE line
}

func (w *responseWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(code)
}

func (w *responseWriter) writeHeaderLocked(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	// The SDK asks for no-cache; whoami depends on the credential.
	w.Header().Set("Cache-Control", "no-store")
	if wait, limited := w.st.limitedFor(); limited && code == http.StatusOK {
		code = http.StatusTooManyRequests
		w.Header().Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(wait)))
	}
	ct := w.Header().Get("Content-Type")
	if code >= 400 && isPlainText(ct) {
		w.status, w.capture = code, &bytes.Buffer{}
		return
	}
	w.sse = mediaType(ct) == "text/event-stream"
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wrote {
		w.writeHeaderLocked(http.StatusOK)
	}
	if w.capture != nil {
		return w.capture.Write(b)
	}
	w.held = append(w.held, b...)
	if !w.sse {
		return len(b), nil // one JSON answer: adapted whole, by finish
	}
	// An event stream goes on at once, each whole line adapted: its
	// data lines hold one message each.
	var out []byte
	for {
		i := bytes.IndexByte(w.held, '\n')
		if i < 0 {
			break
		}
		line := w.held[:i+1]
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			line = append(append([]byte("data: "), AdaptResponse(bytes.TrimRight(data, "\r\n"), w.version)...), '\n')
		}
		out = append(out, line...)
		w.held = w.held[i+1:]
	}
	if len(out) > 0 {
		if _, err := w.ResponseWriter.Write(out); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Flush sends what was written so far (SSE); nothing before a header.
func (w *responseWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wrote || w.capture != nil || !w.sse {
		return
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach deadlines.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes what is held: a captured plain-text error as a JSON-RPC
// error, a JSON answer adapted to the protocol version, the rest of a
// stream.
func (w *responseWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.capture != nil {
		code, msg := sdkError(w.status, strings.TrimSpace(w.capture.String()))
		w.Header().Del("Content-Length")
		writeRPCError(w.ResponseWriter, w.status, w.id, code, msg, nil)
		return
	}
	if len(w.held) == 0 {
		return
	}
	out := w.held
	if !w.sse {
		out = AdaptResponse(out, w.version)
	}
	_, _ = w.ResponseWriter.Write(out)
	w.held = nil
}

// sdkError is the JSON-RPC error a plain-text error of the SDK's HTTP
// transport means, with the message to send. The SDK words a refused
// message after the jsonrpc2 sentinel it wrapped ("JSON RPC not handled",
// "invalid request: ...", "invalid params: ...", ...), the same sentinel
// whose code it answers over stdio; its other refusals are about the HTTP
// request (a method other than POST, a Content-Type, a protocol version
// header, a batch the version forbids), which are invalid requests.
// Bodies that are not JSON never reach the SDK: Handler answers them with
// a parse error.
func sdkError(status int, msg string) (int, string) {
	if status >= 500 {
		return jsonrpc.CodeInternalError, msg
	}
	inner := strings.TrimPrefix(msg, "malformed payload: ")
	switch {
	case strings.HasPrefix(inner, "JSON RPC not handled"), strings.HasPrefix(inner, "method not found"):
		// `JSON RPC not handled: "foo/bar" unsupported`, worded as stdio
		// words it.
		method := ""
		if i, j := strings.IndexByte(inner, '"'), strings.LastIndexByte(inner, '"'); i >= 0 && j > i {
			method = inner[i : j+1]
		}
		if method == "" {
			return jsonrpc.CodeMethodNotFound, "method not found"
		}
		return jsonrpc.CodeMethodNotFound, "method not found: " + method
	case strings.HasPrefix(inner, "invalid params"):
		return jsonrpc.CodeInvalidParams, msg
	case strings.HasPrefix(inner, "parse error") && inner == msg:
		return jsonrpc.CodeParseError, msg
	}
	return jsonrpc.CodeInvalidRequest, msg
}

// isPlainText reports the content type of the SDK's http.Error answers.
func isPlainText(ct string) bool { return mediaType(ct) == "text/plain" }

func mediaType(ct string) string {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt
}

// preferSSE reads the Accept header: whether the client prefers an SSE
// stream to a JSON answer (a tie goes to JSON: one tool call has one
// answer), and whether it accepts either at all. No Accept accepts both.
func preferSSE(values []string) (sse, ok bool) {
	header := strings.TrimSpace(strings.Join(values, ","))
	if header == "" {
		return false, true
	}
	jsonQ := acceptQ(header, "application", "json")
	sseQ := acceptQ(header, "text", "event-stream")
	if jsonQ <= 0 && sseQ <= 0 {
		return false, false
	}
	return sseQ > jsonQ, true
}

// acceptQ is the quality the Accept header gives typ/sub: that of the
// most specific range that matches it, 0 when none does.
func acceptQ(header, typ, sub string) float64 {
	best, q := -1, 0.0
	for _, part := range strings.Split(header, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		t, s, _ := strings.Cut(mt, "/")
		spec := -1
		switch {
		case t == typ && s == sub:
			spec = 2
		case t == typ && s == "*":
			spec = 1
		case t == "*" && s == "*":
			spec = 0
		}
		if spec <= best {
			continue
		}
		best, q = spec, 1
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1 {
				q = f
			} else {
				q = 0
			}
		}
	}
	return q
}
