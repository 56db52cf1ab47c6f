package oauth

import (
	"strings"
)

// ResourceMetadataPath is where a protected resource's metadata is
// (RFC 9728 §3): the root's at this path, the MCP endpoint's at this path
// + "/mcp".
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is a protected resource's metadata document (RFC 9728):
// what a client that holds no token yet needs to get one.
type ResourceMetadata struct {
	// Resource is the resource's identifier: the URL the metadata is of
	// (RFC 9728 §3.3), which tokens name in their aud.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers whose tokens it accepts.
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
	// BearerMethodsSupported is ["header"]: tokens go in Authorization.
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// NewResourceMetadata is the metadata of resource (a URL) protected by
// issuers, with a name and a page for people.
func NewResourceMetadata(resource string, issuers []string, name, docs string) ResourceMetadata {
	m := ResourceMetadata{Resource: resource, AuthorizationServers: append([]string{}, issuers...),
		ScopesSupported: []string{ScopeRead, ScopePost}, BearerMethodsSupported: []string{"header"},
		ResourceName: name, ResourceDocumentation: docs}
	return m
}

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
