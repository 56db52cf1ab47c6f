package api

// Info is GET /a2a/info: a cheap, anonymous connectivity check that names
// what this server speaks and where, built once at start (no store read).
type Info struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// ProtocolVersions are the A2A versions served, newest first.
	ProtocolVersions []string `json:"protocolVersions"`
	// Interfaces are the A2A endpoints, as on the agent card.
	Interfaces []InfoInterface `json:"interfaces"`
	// AgentCard is the URL of the public agent card.
	AgentCard string `json:"agentCard"`
	// AgentCard03 is the URL of the card in the A2A 0.3 shape, for 0.3
	// clients that discover rather than being pointed at an endpoint.
	AgentCard03 string `json:"agentCard03"`
	// MCP is the MCP endpoint, when MCP is on.
	MCP string `json:"mcp,omitempty"`
	// JWKS is the URL of the public keys that verify kfa's signatures.
	JWKS string `json:"jwks,omitempty"`
	// OAuth, when the server accepts OAuth access tokens, says from whom
	// and where to start.
	OAuth *InfoOAuth `json:"oauth,omitempty"`
}

// InfoOAuth is what a client needs to bring an OAuth access token.
type InfoOAuth struct {
	// ResourceMetadata is the protected resource metadata (RFC 9728) of
	// the A2A and API endpoints; MCPResourceMetadata that of /mcp.
	ResourceMetadata    string `json:"resourceMetadata"`
	MCPResourceMetadata string `json:"mcpResourceMetadata,omitempty"`
	// Issuers are the providers whose tokens are accepted.
	Issuers []string `json:"issuers"`
	// Scopes are the scopes a token may grant: read, post.
	Scopes []string `json:"scopes"`
}

// InfoInterface is one A2A endpoint.
type InfoInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}
