package httpkit

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
)

// The query parameters and path variables of every surface are read here,
// so a parameter means the same on each: given at most once (under any of
// its names: the camelCase one first, then its snake_case alias),
// integers in base 10, booleans true, false, 1 or 0 in any case. Errors
// name the parameter by its first name.

// QueryStr reads a single-valued query parameter under any of its names;
// "" when absent.
func QueryStr(q url.Values, names ...string) (string, error) {
	var (
		val   string
		found bool
	)
	for _, n := range names {
		vs, ok := q[n]
		if !ok {
			continue
		}
		if found || len(vs) > 1 {
			return "", a2a.BadParam(names[0], "given more than once")
		}
		val, found = vs[0], true
	}
	return val, nil
}

// QueryInt reads an integer query parameter; nil when absent (or empty).
func QueryInt(q url.Values, names ...string) (*int, error) {
	s, err := QueryStr(q, names...)
	if err != nil || s == "" {
		return nil, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, a2a.BadParam(names[0], "must be an integer, not %q", Truncate(s, 32))
	}
	return &n, nil
}

// QueryBool reads a boolean query parameter; false when absent.
func QueryBool(q url.Values, names ...string) (bool, error) {
	s, err := QueryStr(q, names...)
	if err != nil || s == "" {
		return false, err
	}
	switch strings.ToLower(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, a2a.BadParam(names[0], "must be true or false, not %q", Truncate(s, 32))
}

// PathVar is the path variable name of the route r matched, unescaped (a
// router that matches encoded paths leaves its variables escaped).
func PathVar(r *http.Request, name string) string {
	v := mux.Vars(r)[name]
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}
