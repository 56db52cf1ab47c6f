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
	t, err := m.Route.GetPathTemplate()
	if err != nil {
		return ""
	}
	return routeVarPattern.ReplaceAllString(t, "{$1}")
}
