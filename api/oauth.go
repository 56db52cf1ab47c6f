package api

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
		ScopesSupported: []string{"read", "post"}, BearerMethodsSupported: []string{"header"},
		ResourceName: name, ResourceDocumentation: docs}
	return m
}
