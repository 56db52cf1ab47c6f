package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// TestChallengeNamesResourceMetadata: with an OAuth provider, the router
// adds resource_metadata (RFC 9728 §5.1) to every Bearer challenge a
// surface writes, the MCP endpoint's for /mcp; without one, and on
// answers without a challenge, it adds nothing.
func TestChallengeNamesResourceMetadata(t *testing.T) {
	const root, mcp = "https://kfa.example.com/.well-known/oauth-protected-resource", "https://kfa.example.com/.well-known/oauth-protected-resource/mcp"
	refuse := func(e *a2a.Error) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpkit.WriteError(w, r, nil, e, e) })
	}
	rs := []route{
		{path: "/a2a/v1/tasks", handler: refuse(a2a.MissingCredential("no token"))},
		{path: "/mcp", handler: refuse(a2a.Errorf(a2a.Unauthenticated, "the token expired"))},
		{path: "/api/v1/discussions/{id}/replies", handler: refuse(a2a.Errorf(a2a.PermissionDenied, "needs post").With("scope", "post"))},
		{path: "/healthz", handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })},
	}
	metadata := func(path string) string {
		if path == "/mcp" {
			return mcp
		}
		return root
	}
	for _, tc := range []struct {
		path  string
		oauth bool
		want  string
	}{
		{"/a2a/v1/tasks", true, `Bearer realm="kfa", resource_metadata="` + root + `"`},
		{"/mcp", true, `Bearer realm="kfa", error="invalid_token", error_description="the token expired", resource_metadata="` + mcp + `"`},
		{"/api/v1/discussions/x/replies", true, `Bearer realm="kfa", error="insufficient_scope", scope="post", resource_metadata="` + root + `"`},
		{"/healthz", true, ""},
		{"/a2a/v1/tasks", false, `Bearer realm="kfa"`},
		{"/mcp", false, `Bearer realm="kfa", error="invalid_token", error_description="the token expired"`},
	} {
		rt := newRouter(rs, slog.New(slog.DiscardHandler), nil, nil)
		if tc.oauth {
			rt.resourceMetadata = metadata
		}
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if got := w.Header().Get("WWW-Authenticate"); got != tc.want {
			t.Errorf("%s (oauth %v): WWW-Authenticate %q, want %q", tc.path, tc.oauth, got, tc.want)
		}
	}
}
