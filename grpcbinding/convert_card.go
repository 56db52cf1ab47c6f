package grpcbinding

import (
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/kfa-project/kfa/a2a"
)

// cardToPB is the agent card as lf.a2a.v1.AgentCard. An optional bool
// kfa leaves out (false) stays unset, so the card's ProtoJSON is kfa's
// JSON.
func cardToPB(c *a2a.AgentCard) (*a2apb.AgentCard, error) {
	out := &a2apb.AgentCard{
		Name:               c.Name,
		Description:        c.Description,
		Version:            c.Version,
		DefaultInputModes:  c.DefaultInputModes,
		DefaultOutputModes: c.DefaultOutputModes,
		DocumentationUrl:   optString(c.DocumentationURL),
		IconUrl:            optString(c.IconURL),
	}
	for _, i := range c.SupportedInterfaces {
		out.SupportedInterfaces = append(out.SupportedInterfaces, &a2apb.AgentInterface{
			Url: i.URL, ProtocolBinding: i.ProtocolBinding, ProtocolVersion: i.ProtocolVersion, Tenant: i.Tenant,
		})
	}
	if p := c.Provider; p != nil {
		out.Provider = &a2apb.AgentProvider{Organization: p.Organization, Url: p.URL}
	}
	caps := &a2apb.AgentCapabilities{
		Streaming:         optBool(c.Capabilities.Streaming),
		PushNotifications: optBool(c.Capabilities.PushNotifications),
		ExtendedAgentCard: optBool(c.Capabilities.ExtendedAgentCard),
	}
	for _, e := range c.Capabilities.Extensions {
		params, err := structOfAny(mapOrNil(e.Params))
		if err != nil {
			return nil, err
		}
		caps.Extensions = append(caps.Extensions, &a2apb.AgentExtension{Uri: e.URI, Description: e.Description, Required: e.Required, Params: params})
	}
	out.Capabilities = caps
	if len(c.SecuritySchemes) > 0 {
		out.SecuritySchemes = make(map[string]*a2apb.SecurityScheme, len(c.SecuritySchemes))
	}
	for name, sc := range c.SecuritySchemes {
		out.SecuritySchemes[name] = schemeToPB(sc)
	}
	out.SecurityRequirements = requirementsToPB(c.SecurityRequirements)
	for _, s := range c.Skills {
		out.Skills = append(out.Skills, &a2apb.AgentSkill{
			Id: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples,
			InputModes: s.InputModes, OutputModes: s.OutputModes, SecurityRequirements: requirementsToPB(s.SecurityRequirements),
		})
	}
	for _, s := range c.Signatures {
		h, err := structOfAny(mapOrNil(s.Header))
		if err != nil {
			return nil, err
		}
		out.Signatures = append(out.Signatures, &a2apb.AgentCardSignature{Protected: s.Protected, Signature: s.Signature, Header: h})
	}
	return out, nil
}

func schemeToPB(sc a2a.SecurityScheme) *a2apb.SecurityScheme {
	switch {
	case sc.APIKey != nil:
		k := sc.APIKey
		return &a2apb.SecurityScheme{Scheme: &a2apb.SecurityScheme_ApiKeySecurityScheme{ApiKeySecurityScheme: &a2apb.APIKeySecurityScheme{
			Description: k.Description, Location: k.Location, Name: k.Name}}}
	case sc.HTTPAuth != nil:
		h := sc.HTTPAuth
		return &a2apb.SecurityScheme{Scheme: &a2apb.SecurityScheme_HttpAuthSecurityScheme{HttpAuthSecurityScheme: &a2apb.HTTPAuthSecurityScheme{
			Description: h.Description, Scheme: h.Scheme, BearerFormat: h.BearerFormat}}}
	case sc.OAuth2 != nil:
		o := sc.OAuth2
		flows := &a2apb.OAuthFlows{}
		switch f := o.Flows; {
		case f.AuthorizationCode != nil:
			a := f.AuthorizationCode
			flows.Flow = &a2apb.OAuthFlows_AuthorizationCode{AuthorizationCode: &a2apb.AuthorizationCodeOAuthFlow{
				AuthorizationUrl: a.AuthorizationURL, TokenUrl: a.TokenURL, RefreshUrl: a.RefreshURL, Scopes: a.Scopes, PkceRequired: a.PKCERequired}}
		case f.ClientCredentials != nil:
			cc := f.ClientCredentials
			flows.Flow = &a2apb.OAuthFlows_ClientCredentials{ClientCredentials: &a2apb.ClientCredentialsOAuthFlow{
				TokenUrl: cc.TokenURL, RefreshUrl: cc.RefreshURL, Scopes: cc.Scopes}}
		}
		return &a2apb.SecurityScheme{Scheme: &a2apb.SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &a2apb.OAuth2SecurityScheme{
			Description: o.Description, Flows: flows, Oauth2MetadataUrl: o.OAuth2MetadataURL}}}
	}
	return &a2apb.SecurityScheme{}
}

func requirementsToPB(rs []a2a.SecurityRequirement) []*a2apb.SecurityRequirement {
	var out []*a2apb.SecurityRequirement
	for _, r := range rs {
		q := &a2apb.SecurityRequirement{Schemes: make(map[string]*a2apb.StringList, len(r.Schemes))}
		for name, l := range r.Schemes {
			q.Schemes[name] = &a2apb.StringList{List: l.List}
		}
		out = append(out, q)
	}
	return out
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optBool(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

// mapOrNil keeps an empty map from becoming an empty Struct kfa's JSON
// leaves out.
func mapOrNil(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
