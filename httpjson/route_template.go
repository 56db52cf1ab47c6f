package httpjson

import (
	"net/http"
	"regexp"

	"github.com/gorilla/mux"
)

// routeVarPattern is the pattern part of a path variable, "{id:[^/:]+}".
var routeVarPattern = regexp.MustCompile(`\{([^{}:]+):[^{}]*\}`)

// RouteTemplate returns the path template of the route r matches, without
// variable patterns ("/a2a/v1/tasks/{id}:cancel"), or "" when no route
// matches it (unknown path, or a method the path does not allow). Metrics
// label requests with it, so labels do not grow with ids.
func (h *Handler) RouteTemplate(r *http.Request) string {
	var m mux.RouteMatch
	if !h.router.Match(r, &m) || m.MatchErr != nil || m.Route == nil {
		return ""
	}
	return h.templates[m.Route]
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
