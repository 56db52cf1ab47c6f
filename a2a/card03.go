package a2a

// AgentCard03 is the agent card in the A2A 0.3 shape, for 0.3 clients:
// one preferred URL and transport, schemes discriminated by "type", and
// security requirements as {"scheme": [scopes]}.
type AgentCard03 struct {
	ProtocolVersion                   string                      `json:"protocolVersion"`
	Name                              string                      `json:"name"`
	Description                       string                      `json:"description"`
	URL                               string                      `json:"url"`
	PreferredTransport                string                      `json:"preferredTransport"`
	AdditionalInterfaces              []AgentInterface03          `json:"additionalInterfaces,omitempty"`
	Provider                          *AgentProvider              `json:"provider,omitempty"`
	Version                           string                      `json:"version"`
	DocumentationURL                  string                      `json:"documentationUrl,omitempty"`
	Capabilities                      AgentCapabilities03         `json:"capabilities"`
	SecuritySchemes                   map[string]SecurityScheme03 `json:"securitySchemes,omitempty"`
	Security                          []map[string][]string       `json:"security,omitempty"`
	DefaultInputModes                 []string                    `json:"defaultInputModes"`
	DefaultOutputModes                []string                    `json:"defaultOutputModes"`
	Skills                            []AgentSkill03              `json:"skills"`
	SupportsAuthenticatedExtendedCard bool                        `json:"supportsAuthenticatedExtendedCard"`
}

// AgentInterface03 is a 0.3 additional interface.
type AgentInterface03 struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// AgentCapabilities03 are the 0.3 capabilities.
type AgentCapabilities03 struct {
	Streaming              bool             `json:"streaming"`
	PushNotifications      bool             `json:"pushNotifications"`
	StateTransitionHistory bool             `json:"stateTransitionHistory"`
	Extensions             []AgentExtension `json:"extensions,omitempty"`
}

// SecurityScheme03 is a 0.3 scheme: http (Scheme, BearerFormat), apiKey
// (In, Name) or oauth2 (Flows, OAuth2MetadataURL).
type SecurityScheme03 struct {
	Type              string      `json:"type"`
	Description       string      `json:"description,omitempty"`
	Scheme            string      `json:"scheme,omitempty"`
	BearerFormat      string      `json:"bearerFormat,omitempty"`
	In                string      `json:"in,omitempty"`
	Name              string      `json:"name,omitempty"`
	Flows             *OAuthFlows `json:"flows,omitempty"`
	OAuth2MetadataURL string      `json:"oauth2MetadataUrl,omitempty"`
}

// AgentSkill03 is a 0.3 skill.
type AgentSkill03 struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Tags        []string              `json:"tags"`
	Examples    []string              `json:"examples,omitempty"`
	InputModes  []string              `json:"inputModes,omitempty"`
	OutputModes []string              `json:"outputModes,omitempty"`
	Security    []map[string][]string `json:"security,omitempty"`
}

// security03 is requirements in 0.3's shape, {"scheme": [scopes]}; an
// empty requirement ({}) is allowed there too: no credential at all.
func security03(reqs []SecurityRequirement) []map[string][]string {
	var out []map[string][]string
	for _, r := range reqs {
		m := make(map[string][]string, len(r.Schemes))
		for name, scopes := range r.Schemes {
			m[name] = append([]string{}, scopes.List...)
		}
		out = append(out, m)
	}
	return out
}

// ToV03 is the card for 0.3 clients: its first JSON-RPC 0.3 interface is
// the URL (0.3 serves nowhere else), and its security requirements in
// 0.3's shape.
func (c AgentCard) ToV03() AgentCard03 {
	out := AgentCard03{
		ProtocolVersion: "0.3.0", Name: c.Name, Description: c.Description,
		PreferredTransport: BindingJSONRPC, Provider: c.Provider, Version: c.Version,
		DocumentationURL: c.DocumentationURL,
		Capabilities: AgentCapabilities03{Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications,
			Extensions: c.Capabilities.Extensions},
		DefaultInputModes: c.DefaultInputModes, DefaultOutputModes: c.DefaultOutputModes,
		SupportsAuthenticatedExtendedCard: c.Capabilities.ExtendedAgentCard,
		Skills:                            []AgentSkill03{},
		Security:                          security03(c.SecurityRequirements),
	}
	for _, i := range c.SupportedInterfaces {
		if i.ProtocolVersion != Version03 {
			continue
		}
		if out.URL == "" {
			out.URL, out.PreferredTransport = i.URL, i.ProtocolBinding
		}
		out.AdditionalInterfaces = append(out.AdditionalInterfaces, AgentInterface03{URL: i.URL, Transport: i.ProtocolBinding})
	}
	if len(c.SecuritySchemes) > 0 {
		out.SecuritySchemes = make(map[string]SecurityScheme03, len(c.SecuritySchemes))
	}
	for name, s := range c.SecuritySchemes {
		switch {
		case s.HTTPAuth != nil:
			out.SecuritySchemes[name] = SecurityScheme03{Type: "http", Description: s.HTTPAuth.Description,
				Scheme: s.HTTPAuth.Scheme, BearerFormat: s.HTTPAuth.BearerFormat}
		case s.APIKey != nil:
			out.SecuritySchemes[name] = SecurityScheme03{Type: "apiKey", Description: s.APIKey.Description,
				In: s.APIKey.Location, Name: s.APIKey.Name}
		case s.OAuth2 != nil:
			flows := s.OAuth2.Flows
			out.SecuritySchemes[name] = SecurityScheme03{Type: "oauth2", Description: s.OAuth2.Description,
				Flows: &flows, OAuth2MetadataURL: s.OAuth2.OAuth2MetadataURL}
		}
	}
	for _, s := range c.Skills {
		out.Skills = append(out.Skills, AgentSkill03{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags,
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes, Security: security03(s.SecurityRequirements)})
	}
	return out
}
