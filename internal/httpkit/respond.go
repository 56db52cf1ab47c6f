package httpkit

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/ratelimit"
)

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":500,"status":"INTERNAL","message":"internal error encoding the response","details":[]}}`)
	}
	WriteRaw(w, status, b)
}

// WriteRaw writes the JSON b and a newline, and returns b with the
// newline (so a pooled buffer keeps its capacity).
func WriteRaw(w http.ResponseWriter, status int, b []byte) []byte {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	b = append(b, '\n')
	_, _ = w.Write(b)
	return b
}

// WriteError writes e, the A2A error of err (service.ToError made it: this
// package sits below the service and maps nothing itself), as an error
// response: a google.rpc.Status body, and the headers of SetErrorHeaders.
// Internal errors are logged with the request id; their details never
// reach the client.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, e *a2a.Error) {
	LogFailure(r, log, err, e)
	SetErrorHeaders(w.Header(), e)
	WriteJSON(w, e.Kind.HTTPStatus, e.Status())
}

// LogFailure logs err, whose A2A error is e, when it is the server's fault.
func LogFailure(r *http.Request, log *slog.Logger, err error, e *a2a.Error) {
	if e.Kind.HTTPStatus >= 500 && log != nil {
		log.Error("request failed", "request_id", RequestID(r.Context()), "err", err.Error())
	}
}

// SetErrorHeaders adds the HTTP headers an error kind calls for: the
// Bearer challenge of an authentication or scope failure, and Retry-After
// of a limit. Every binding sends them, whatever its HTTP status. A
// request that sent no credential is challenged without an error
// attribute (RFC 6750 §3.1); one whose credential failed is told
// error="invalid_token"; one without the scope an action needs is told
// which (the error's "scope" metadata, from agents.ScopeError).
func SetErrorHeaders(h http.Header, e *a2a.Error) {
	switch e.Kind {
	case a2a.Unauthenticated:
		if e.NoCredential {
			h.Set("WWW-Authenticate", `Bearer realm="kfa"`)
			break
		}
		h.Set("WWW-Authenticate", `Bearer realm="kfa", error="invalid_token", error_description="`+quoteSafe(e.Message)+`"`)
	case a2a.PermissionDenied:
		c := `Bearer realm="kfa", error="insufficient_scope"`
		if s := e.Metadata["scope"]; s != "" {
			c += `, scope="` + quoteSafe(s) + `"`
		}
		h.Set("WWW-Authenticate", c)
	case a2a.RateLimited:
		h.Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(e.RetryAfter)))
	}
}

// quoteSafe makes s fit inside a quoted-string of an auth challenge.
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r > 0x7e {
			return '\''
		}
		return r
	}, s)
}

// SetRateLimitHeaders writes q as the RateLimit header fields of the IETF
// draft: the limit, what is left of it, and the seconds until it is whole
// again; RateLimit-Policy names the limit and its window.
func SetRateLimitHeaders(h http.Header, q ratelimit.Quota) {
	h.Set("RateLimit-Limit", strconv.Itoa(q.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(q.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(int((q.Reset+time.Second-1)/time.Second)))
	h.Set("RateLimit-Policy", strconv.Itoa(q.Limit)+";w="+strconv.Itoa(int(q.Window/time.Second))+`;name="`+q.Name+`"`)
}
