package httpjson

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/ratelimit"
)

// serve is the outermost layer: request id, recovery, access log.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	start := time.Now()
	r, q := httpkit.Begin(r)
	id, ctx := q.ID, r.Context()
	w.Header().Set("X-Request-Id", id)
	rec := &recorder{ResponseWriter: w, status: http.StatusOK, quota: q.Quota}
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
			slog.String("remote", httpkit.ClientAddr(r)),
			slog.String("agent", q.Agent()),
		)
	}()
	next.ServeHTTP(rec, r)
}

// recorder notes the status and size of a response for the access log,
// and adds the RateLimit headers of the limit the request counted against
// (an authenticated request; none for a refused credential) before the
// headers go out.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
	quota  *ratelimit.Report
}

// start is called before the first byte of the response.
func (r *recorder) start() {
	if q, ok := r.quota.Quota(); ok {
		httpkit.SetRateLimitHeaders(r.ResponseWriter.Header(), q)
	}
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
		r.start()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.start()
	}
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// private marks responses that depend on the caller's credential: never
// cached by shared caches, and never given wildcard CORS.
func (h *Handler) private(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Add("Vary", "Authorization, X-API-Key")
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
				"A2A-Version %q is not supported here; send A2A-Version: 1.0", httpkit.Truncate(v, 32)).
				With("supportedVersions", a2a.Version10))
		}
	})
}
