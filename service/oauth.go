package service

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

// OAuth is what the server tells clients about the OAuth providers whose
// access tokens it accepts (kfa serve --oauth-issuer): the card's oauth2
// schemes, /a2a/info and the guides are made from it.
type OAuth struct {
	// ResourceMetadataURL is the server's protected resource metadata
	// (RFC 9728), and MCPResourceMetadataURL the MCP endpoint's.
	ResourceMetadataURL    string
	MCPResourceMetadataURL string
	// Issuers are the configured providers, in the order given.
	Issuers []OAuthIssuer
}

// OAuthIssuer is one provider as the server knows it now.
type OAuthIssuer struct {
	Issuer string
	// MetadataURL is where its metadata was read: empty until the server
	// has reached it, and then the card lists its flows.
	MetadataURL string
	// AuthorizationURL and TokenURL are its endpoints.
	AuthorizationURL, TokenURL string
	// ClientCredentials and AuthorizationCode say which flows it offers
	// (the authorization code flow only with PKCE S256).
	ClientCredentials, AuthorizationCode bool
}

// The names of the OAuth schemes on the card: one per flow, since a 1.0
// scheme holds one flow (and the official SDKs refuse two); a second
// issuer's schemes take the suffix "-2", and so on.
const (
	OAuthScheme     = "oauth2"
	OAuthCodeScheme = "oauth2AuthCode"
)

// OAuthScopes are the scopes a provider's token may grant, as the card
// describes them.
var OAuthScopes = map[string]string{
	"read": "search, and read your own tasks and inbox",
	"post": "also ask the community (ask-network) and reply",
}

// schemeName is the name of a scheme of the i-th issuer.
func schemeName(base string, i int) string {
	if i == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(i+1)
}

// oauthSchemes are the card's oauth2 schemes: per reached issuer, one for
// client credentials and one for the authorization code flow, as it
// offers them. names are the scheme names, in card order.
func oauthSchemes(o *OAuth) (schemes map[string]a2a.SecurityScheme, names []string) {
	if o == nil {
		return nil, nil
	}
	schemes = map[string]a2a.SecurityScheme{}
	for i, is := range o.Issuers {
		if is.MetadataURL == "" || is.TokenURL == "" {
			continue
		}
		desc := fmt.Sprintf("An OAuth 2.1 access token (a JWT, RFC 9068) of %s whose audience is this server; "+
			`its scope "read" or "post" says what it may do (ask-network needs "post"). Send it as Authorization: Bearer. `+
			"The first token of a new identity (iss, sub) makes its agent; the same identity is always the same agent. "+
			"Protected resource metadata: %s", is.Issuer, o.ResourceMetadataURL)
		if is.ClientCredentials {
			n := schemeName(OAuthScheme, i)
			schemes[n] = a2a.SecurityScheme{OAuth2: &a2a.OAuth2SecurityScheme{
				Description:       "Client credentials: for an agent that acts for itself. " + desc,
				OAuth2MetadataURL: is.MetadataURL,
				Flows:             a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: is.TokenURL, Scopes: OAuthScopes}},
			}}
			names = append(names, n)
		}
		if is.AuthorizationCode && is.AuthorizationURL != "" {
			n := schemeName(OAuthCodeScheme, i)
			schemes[n] = a2a.SecurityScheme{OAuth2: &a2a.OAuth2SecurityScheme{
				Description:       "Authorization code with PKCE (S256): for an agent that acts for a person who signs in. " + desc,
				OAuth2MetadataURL: is.MetadataURL,
				Flows: a2a.OAuthFlows{AuthorizationCode: &a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: is.AuthorizationURL,
					TokenURL: is.TokenURL, Scopes: OAuthScopes, PKCERequired: true}},
			}}
			names = append(names, n)
		}
	}
	return schemes, names
}

// oauthAskNote is what the ask skill's description adds when providers'
// tokens are accepted.
func oauthAskNote(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return ` Instead of an agent token, an OAuth access token of this server's provider with the "post" scope works too ` +
		"(security scheme " + quoted(names) + "; the scheme names the provider's token endpoint and metadata)."
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, " or ")
}

// ResourceMetadataPath is where the protected resource metadata (RFC 9728
// §3) is served: the server's at this path, the MCP endpoint's at this
// path + "/mcp".
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ProtectedResource is the protected resource metadata (RFC 9728) of the
// server (mcp false) or of its MCP endpoint; ok is false when no OAuth
// provider is configured (the document does not exist then).
func (s *Service) ProtectedResource(mcp bool) (m api.ResourceMetadata, ok bool) {
	o := s.cfg.OAuth
	if o == nil {
		return m, false
	}
	issuers := make([]string, len(o.Issuers))
	for i, is := range o.Issuers {
		issuers[i] = is.Issuer
	}
	resource := s.cfg.PublicURL
	if mcp {
		resource += "/mcp"
	}
	return api.NewResourceMetadata(resource, issuers, "kfa", s.cfg.PublicURL+"/llms.txt"), true
}

// ResourceMetadataURL is the URL of the metadata that a Bearer challenge
// to a request for path points at (RFC 9728 §5.1): the MCP endpoint's for
// /mcp, the server's for every other path; "" when no OAuth provider is
// configured.
func (s *Service) ResourceMetadataURL(path string) string {
	if s.cfg.OAuth == nil {
		return ""
	}
	if path == "/mcp" || strings.HasPrefix(path, "/mcp/") {
		return s.cfg.OAuth.MCPResourceMetadataURL
	}
	return s.cfg.OAuth.ResourceMetadataURL
}
