package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/service"
)

// router is the public listener's handler: every surface's routes
// (routes.go) in one gorilla/mux router, inside the outer middleware
// (request id, panic recovery, access log, RateLimit headers).
type router struct {
	mux *mux.Router
	log *slog.Logger
	// page answers an unknown path a browser asks for (the web view's
	// 404 page); nil answers the JSON error to everyone.
	page http.Handler
	// wantsHTML tells a browser's request from an API client's.
	wantsHTML func(*http.Request) bool
	// templates are the routes' path templates for metrics labels
	// (RouteTemplate), computed once.
	templates map[*mux.Route]string
}

// newRouter registers rs in order (gorilla/mux tries routes in order, so
// the busiest come first).
func newRouter(rs []route, log *slog.Logger, page http.Handler, wantsHTML func(*http.Request) bool) *router {
	rt := &router{mux: mux.NewRouter(), log: log, page: page, wantsHTML: wantsHTML}
	m := rt.mux
	// Subrouters are avoided on purpose: with them gorilla/mux answers 404
	// instead of 405 for a wrong method.
	m.UseEncodedPath()
	for _, r := range rs {
		mr := m.Handle(r.path, r.handler)
		if len(r.methods) > 0 {
			mr.Methods(r.methods...)
		}
	}
	m.NotFoundHandler = http.HandlerFunc(rt.notFound)
	m.MethodNotAllowedHandler = http.HandlerFunc(rt.methodNotAllowed)
	rt.templates = routeTemplates(m)
	return rt
}

// ServeHTTP runs the request through the outer middleware to its route.
func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
			rt.log.Error("panic serving request", "request_id", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !rec.wrote {
				rt.fail(rec, r, fmt.Errorf("panic: %v", p))
			}
		}
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		}
		rt.log.LogAttrs(ctx, level, "request",
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
	rt.mux.ServeHTTP(rec, r)
}

func (rt *router) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpkit.WriteError(w, r, rt.log, err, service.ToError(err))
}

// notFound answers a path no route serves: the web view's 404 page to a
// browser, the JSON error to everyone else.
func (rt *router) notFound(w http.ResponseWriter, r *http.Request) {
	if rt.page != nil && rt.wantsHTML(r) {
		rt.page.ServeHTTP(w, r)
		return
	}
	rt.fail(w, r, a2a.Errorf(a2a.NotFound, "no route for %s %s", r.Method, httpkit.Truncate(r.URL.Path, 128)))
}

// methodNotAllowed answers 405 with the methods the path does accept.
func (rt *router) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		probe := r.Clone(r.Context())
		probe.Method = m
		var match mux.RouteMatch
		if rt.mux.Match(probe, &match) && match.MatchErr == nil {
			allow = append(allow, m)
		}
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	rt.fail(w, r, a2a.Errorf(a2a.MethodNotAllowed, "%s is not allowed on %s; allowed: %s",
		r.Method, httpkit.Truncate(r.URL.Path, 128), strings.Join(allow, ", ")))
}

// routeVarPattern is the pattern part of a path variable, "{id:[^/:]+}".
var routeVarPattern = regexp.MustCompile(`\{([^{}:]+):[^{}]*\}`)

// RouteTemplate returns the path template of the route r matches, without
// variable patterns ("/a2a/v1/tasks/{id}:cancel"), or "" when no route
// matches it (unknown path, or a method the path does not allow). Metrics
// label requests with it, so labels do not grow with ids.
func (rt *router) RouteTemplate(r *http.Request) string {
	var m mux.RouteMatch
	if !rt.mux.Match(r, &m) || m.MatchErr != nil || m.Route == nil {
		return ""
	}
	return rt.templates[m.Route]
}

// routeTemplates computes every route's template once (RouteTemplate runs
// on every request).
func routeTemplates(router *mux.Router) map[*mux.Route]string {
	out := map[*mux.Route]string{}
	_ = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		if t, err := route.GetPathTemplate(); err == nil {
			out[route] = routeVarPattern.ReplaceAllString(t, "{$1}")
		}
		return nil
	})
	return out
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
