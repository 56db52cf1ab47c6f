package discovery

import (
	"net/http"

	"github.com/kfa-project/kfa/internal/httpkit"
)

// HasOAuth reports whether the protected resource metadata routes are
// served: only when an OAuth provider is configured.
func (h *Handler) HasOAuth() bool {
	_, ok := h.deps.Service.ProtectedResource(false)
	return ok
}

// ProtectedResource answers GET /.well-known/oauth-protected-resource:
// the server's protected resource metadata (RFC 9728), which a client
// that got a 401 follows to the provider that issues its tokens.
func (h *Handler) ProtectedResource(w http.ResponseWriter, r *http.Request) {
	h.protectedResource(w, r, false)
}

// ProtectedResourceMCP answers GET
// /.well-known/oauth-protected-resource/mcp: the MCP endpoint's metadata
// (MCP's authorization spec).
func (h *Handler) ProtectedResourceMCP(w http.ResponseWriter, r *http.Request) {
	h.protectedResource(w, r, true)
}

func (h *Handler) protectedResource(w http.ResponseWriter, _ *http.Request, mcp bool) {
	m, _ := h.deps.Service.ProtectedResource(mcp)
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Cache-Control", h.maxAge())
	httpkit.WriteJSON(w, http.StatusOK, m)
}
