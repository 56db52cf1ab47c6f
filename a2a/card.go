package a2a

// The protocol bindings an AgentInterface can name.
const (
	BindingHTTPJSON = "HTTP+JSON"
	BindingJSONRPC  = "JSONRPC"
	BindingGRPC     = "GRPC"
)

// AgentCard describes an agent (v1.0 shape).
type AgentCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []AgentInterface          `json:"supportedInterfaces"`
	Provider             *AgentProvider            `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	SecurityRequirements []SecurityRequirement     `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
	Signatures           []AgentCardSignature      `json:"signatures,omitempty"`
	IconURL              string                    `json:"iconUrl,omitempty"`
}

// AgentCardSignature is a JWS over the card (RFC 7515, detached payload):
// the payload is the RFC 8785 canonical JSON of the card without its
// signatures and without unset fields.
type AgentCardSignature struct {
	Protected string         `json:"protected"` // base64url JWS protected header
	Signature string         `json:"signature"` // base64url
	Header    map[string]any `json:"header,omitempty"`
}

// AgentInterface is one way to reach the agent.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
	Tenant          string `json:"tenant,omitempty"`
}

// AgentProvider names who runs the agent.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// AgentCapabilities leave out what is false, as ProtoJSON leaves out
// unset fields: the signed card then has one form, whoever re-encodes it.
type AgentCapabilities struct {
	Streaming         bool             `json:"streaming,omitempty"`
	PushNotifications bool             `json:"pushNotifications,omitempty"`
	ExtendedAgentCard bool             `json:"extendedAgentCard,omitempty"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
}

// AgentExtension declares something the agent supports beyond the core
// protocol. A client that does not know the URI ignores an extension that
// is not required.
type AgentExtension struct {
	URI         string         `json:"uri"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required,omitempty"`
	Params      map[string]any `json:"params,omitempty"`
}

// AgentSkill is one thing the agent can do.
type AgentSkill struct {
	ID                   string                `json:"id"`
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	Tags                 []string              `json:"tags"`
	Examples             []string              `json:"examples,omitempty"`
	InputModes           []string              `json:"inputModes,omitempty"`
	OutputModes          []string              `json:"outputModes,omitempty"`
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
}

// SecurityRequirement is {"schemes": {"<name>": {"list": [scopes]}}}.
type SecurityRequirement struct {
	Schemes map[string]StringList `json:"schemes"`
}

// StringList is the proto StringList message.
type StringList struct {
	List []string `json:"list,omitempty"`
}

// SecurityScheme is the oneof of scheme kinds; kfa uses HTTP auth, an
// API key header, and OAuth 2.0 when it accepts a provider's tokens.
type SecurityScheme struct {
	APIKey   *APIKeySecurityScheme   `json:"apiKeySecurityScheme,omitempty"`
	HTTPAuth *HTTPAuthSecurityScheme `json:"httpAuthSecurityScheme,omitempty"`
	OAuth2   *OAuth2SecurityScheme   `json:"oauth2SecurityScheme,omitempty"`
}

// OAuth2SecurityScheme is an OAuth 2.0 authorization server whose access
// tokens the agent accepts. Flows is a oneof in 1.0: one flow per scheme
// (official SDKs refuse a scheme with two).
type OAuth2SecurityScheme struct {
	Description       string     `json:"description,omitempty"`
	Flows             OAuthFlows `json:"flows"`
	OAuth2MetadataURL string     `json:"oauth2MetadataUrl,omitempty"`
}

// OAuthFlows holds exactly one flow.
type OAuthFlows struct {
	AuthorizationCode *AuthorizationCodeOAuthFlow `json:"authorizationCode,omitempty"`
	ClientCredentials *ClientCredentialsOAuthFlow `json:"clientCredentials,omitempty"`
}

// AuthorizationCodeOAuthFlow is the authorization code flow (RFC 6749
// §4.1), with PKCE when PKCERequired.
type AuthorizationCodeOAuthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl"`
	TokenURL         string            `json:"tokenUrl"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
	PKCERequired     bool              `json:"pkceRequired,omitempty"`
}

// ClientCredentialsOAuthFlow is the client credentials flow (RFC 6749
// §4.4): how an agent without a person gets a token.
type ClientCredentialsOAuthFlow struct {
	TokenURL   string            `json:"tokenUrl"`
	RefreshURL string            `json:"refreshUrl,omitempty"`
	Scopes     map[string]string `json:"scopes"`
}

// APIKeySecurityScheme is a key sent in a header, query or cookie.
type APIKeySecurityScheme struct {
	Description string `json:"description,omitempty"`
	Location    string `json:"location"` // "header", "query" or "cookie"
	Name        string `json:"name"`
}

// HTTPAuthSecurityScheme is an RFC 7235 scheme such as Bearer.
type HTTPAuthSecurityScheme struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}
