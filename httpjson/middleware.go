package httpjson

import (
	"context"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyAgentID
)

// RequestID returns the request id of ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// requestIDFrom keeps a client's X-Request-Id when it is short and plain,
// so logs can be correlated across services; otherwise it makes one.
func requestIDFrom(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 {
		ok := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				ok = false
				break
			}
		}
		if ok {
			return id
		}
	}
	return ulid.Make().String()
}

// agentSlot lets the auth code tell the access log which agent called,
// without the log ever seeing a token.
type agentSlot struct{ id string }

// serve is the outermost layer: request id, recovery, access log.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	start := time.Now()
	id := requestIDFrom(r)
	slot := &agentSlot{}
	ctx := context.WithValue(context.WithValue(r.Context(), keyRequestID, id), keyAgentID, slot)
	r = r.WithContext(ctx)
	w.Header().Set("X-Request-Id", id)
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.deps.Log.Error("panic serving request", "request_id", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !rec.wrote {
				h.fail(rec, r, fmt.Errorf("panic: %v", p))
			}
		}
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		}
		h.deps.Log.LogAttrs(ctx, level, "request",
			slog.String("request_id", id),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", clientAddr(r)),
			slog.String("agent", slot.id),
		)
	}()
	next.ServeHTTP(rec, r)
}

// recorder notes the status and size of a response for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// clientAddr is the peer's IP address, the key of per-address limits.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// private marks responses that depend on the caller's credential: never
// cached by shared caches, and never given wildcard CORS.
func (h *Handler) private(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Add("Vary", "Authorization")
		next.ServeHTTP(w, r)
	})
}

// requireVersion enforces A2A-Version: 1.0 on the HTTP+JSON binding. An
// absent or empty value means 0.3, which this binding does not serve.
func (h *Handler) requireVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, present := r.Header[http.CanonicalHeaderKey(a2a.VersionHeader)]
		v := ""
		if present && len(raw) > 0 {
			v = raw[0]
		} else if q := r.URL.Query().Get(a2a.VersionHeader); q != "" {
			v = q
		}
		switch nv := a2a.NormalizeVersion(v); {
		case nv == a2a.Version10:
			next.ServeHTTP(w, r)
		case v == "":
			h.fail(w, r, a2a.Errorf(a2a.VersionNotSupported,
				"missing A2A-Version header: an absent version means 0.3, which this HTTP+JSON endpoint does not serve; send A2A-Version: 1.0").
				With("supportedVersions", a2a.Version10))
		default:
			h.fail(w, r, a2a.Errorf(a2a.VersionNotSupported,
				"A2A-Version %q is not supported here; send A2A-Version: 1.0", truncate(v, 32)).
				With("supportedVersions", a2a.Version10))
		}
	})
}

// JSONContentType checks that a request's Content-Type is JSON.
func JSONContentType(r *http.Request) error { return jsonContentType(r) }

// jsonContentType checks the Content-Type of a request with a body.
func jsonContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return a2a.Errorf(a2a.ContentTypeNotSupported, "missing Content-Type; send application/json or application/a2a+json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && mt != "application/a2a+json") {
		return a2a.Errorf(a2a.ContentTypeNotSupported, "Content-Type %q is not supported; send application/json or application/a2a+json",
			truncate(ct, 64))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
