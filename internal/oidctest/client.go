package oidctest

import (
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is an OAuth client registered at the provider.
type Client struct {
	ID, Secret string
	// Scopes are the scopes it may be granted (besides openid, profile
	// and email for a web client); asked for others are left out.
	Scopes []string
	// Audience is the aud of its access tokens; empty: its own id. A web
	// client's tokens, ID tokens included, hold its own id, then these
	// (as Keycloak's audience mapper adds a resource to them).
	Audience []string
	// Lifetime of its access tokens; zero is 5 minutes, and a negative one
	// issues tokens that expired that long ago.
	Lifetime time.Duration
	// Username is the preferred_username of its client credentials
	// tokens; empty leaves the claim out.
	Username string
	// Claims are added to its access tokens.
	Claims map[string]any
	// RedirectURIs make it a web client (authorization code with PKCE);
	// without them it is a service (client credentials).
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
}

// client is Client as the OP sees it.
type client struct{ cfg Client }

func (c *client) GetID() string                       { return c.cfg.ID }
func (c *client) RedirectURIs() []string              { return c.cfg.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string    { return c.cfg.PostLogoutRedirectURIs }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	if len(c.cfg.RedirectURIs) > 0 {
		return []oidc.GrantType{oidc.GrantTypeCode}
	}
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c *client) LoginURL(id string) string           { return "/login?id=" + id }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration      { return 5 * time.Minute }
func (c *client) DevMode() bool                       { return false }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(scope string) bool {
	switch scope {
	case oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail:
		return true
	}
	return slices.Contains(c.cfg.Scopes, scope)
}
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) ClockSkew() time.Duration             { return 0 }

var _ op.Client = (*client)(nil)
