package oauth

import (
	"strings"
)

// ResourceMetadataPath is where a protected resource's metadata is
// (RFC 9728 §3): the root's at this path, the MCP endpoint's at this path
// + "/mcp".
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// WithResourceMetadata adds the resource_metadata parameter (RFC 9728
// §5.1) to a Bearer challenge, so that a client that got a 401 or 403
// finds the provider to ask for a token. A challenge of another scheme,
// or one that has the parameter already, is returned as it is.
func WithResourceMetadata(challenge, metadataURL string) string {
	scheme, _, _ := strings.Cut(strings.TrimSpace(challenge), " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.Contains(challenge, "resource_metadata=") {
		return challenge
	}
	param := `resource_metadata="` + metadataURL + `"`
	if strings.TrimSpace(challenge) == scheme {
		return scheme + " " + param
	}
	return challenge + ", " + param
}
