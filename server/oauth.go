package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/oauth"
	"github.com/kfa-project/kfa/service"
)

// The OAuth resource server (kfa serve --oauth-issuer, docs/oauth.md):
// the oauth.Verifier reads the providers' metadata and keys in the
// background, service.Authenticate asks it about bearers that are not kfa
// tokens (accessTokens), and the card, /a2a/info and the guides are made
// again each time a provider is reached (watchOAuth).

// newOAuth builds the verifier of cfg's issuers; nil when none is
// configured.
func (s *Server) newOAuth() (*oauth.Verifier, error) {
	if len(s.cfg.OAuthIssuers) == 0 {
		return nil, nil
	}
	return oauth.NewVerifier(oauth.Config{Issuers: s.cfg.OAuthIssuers, Audiences: s.cfg.OAuthAudienceList(),
		PlainJWT: s.cfg.OAuthPlainJWTIssuers, Log: s.log})
}

// accessTokens is service.AccessTokens over an oauth.Verifier.
type accessTokens struct{ v *oauth.Verifier }

// LooksLikeAccessToken implements service.AccessTokens.
func (a accessTokens) LooksLikeAccessToken(token string) bool { return oauth.LooksLikeJWT(token) }

// Audiences implements service.AccessTokens.
func (a accessTokens) Audiences() []string { return a.v.Audiences() }

// Verify implements service.AccessTokens.
func (a accessTokens) Verify(ctx context.Context, token string) (service.AccessToken, error) {
	t, err := a.v.Verify(ctx, token)
	if err != nil {
		var r *oauth.Refusal
		if errors.As(err, &r) {
			return service.AccessToken{}, &service.TokenRefusal{Reason: r.Reason, Scope: agents.Scope(r.Scope)}
		}
		return service.AccessToken{}, err
	}
	out := service.AccessToken{Identity: agents.Identity{Issuer: t.Issuer, Subject: t.Subject}, Name: t.Name}
	for _, sc := range t.Scopes {
		out.Scopes = append(out.Scopes, agents.Scope(sc))
	}
	return out, nil
}

// oauthDeps are the service's OAuth dependencies; zero without an issuer.
func (s *Server) oauthDeps() (service.AccessTokens, service.OAuthPolicy) {
	if s.oauth == nil {
		return nil, service.OAuthPolicy{}
	}
	return accessTokens{s.oauth}, service.OAuthPolicy{AutoProvision: s.cfg.OAuthAutoProvision}
}

// oauthState is what the service shows of the providers now: every
// configured issuer, with its endpoints once reached. Nil without one.
func (s *Server) oauthState() *service.OAuth {
	if s.oauth == nil {
		return nil
	}
	base := s.cfg.PublicURL + service.ResourceMetadataPath
	o := &service.OAuth{ResourceMetadataURL: base, MCPResourceMetadataURL: base + "/mcp"}
	for _, is := range s.oauth.Issuers() {
		st := service.OAuthIssuer{Issuer: is.URL}
		if m := is.Metadata(); m != nil {
			st.MetadataURL, st.AuthorizationURL, st.TokenURL = m.URL, m.AuthorizationEndpoint, m.TokenEndpoint
			st.ClientCredentials = m.SupportsGrant("client_credentials")
			st.AuthorizationCode = m.SupportsGrant("authorization_code") && slices.Contains(m.CodeChallengeMethodsSupported, "S256")
		}
		o.Issuers = append(o.Issuers, st)
	}
	return o
}

// publishOAuth remakes the card and its documents for what is known of
// the providers now.
func (s *Server) publishOAuth() {
	if s.oauth == nil {
		return
	}
	// One at a time, so a slower remaking never shows an older state
	// after a newer one.
	s.oauthMu.Lock()
	defer s.oauthMu.Unlock()
	o := s.oauthState()
	for _, svc := range s.oauthServices {
		if err := svc.SetOAuth(*o); err != nil {
			s.log.Error("oauth: cannot remake the agent card", "err", err)
		}
	}
}

// startOAuth starts discovering the providers, and remakes the card each
// time one is reached, until ctx ends.
func (s *Server) startOAuth(ctx context.Context) {
	if s.oauth == nil {
		return
	}
	ctx, s.oauthStop = context.WithCancel(ctx)
	changed := s.oauth.Changed()
	s.oauth.Start(ctx)
	s.oauthDone = make(chan struct{})
	go func() {
		defer close(s.oauthDone)
		for {
			select {
			case <-changed:
				changed = s.oauth.Changed()
				s.publishOAuth()
			case <-ctx.Done():
				return
			}
		}
	}()
}

// stopOAuth stops the provider discovery and the card's remaking.
func (s *Server) stopOAuth() {
	if s.oauth == nil {
		return
	}
	if s.oauthStop != nil {
		s.oauthStop()
	}
	s.oauth.Stop()
	if s.oauthDone != nil {
		<-s.oauthDone
	}
}

// OAuthReady waits until every configured provider has been reached and
// the card names it (nil at once without one), or ctx ends: for tests and
// for readiness checks that want the provider's tokens to work.
func (s *Server) OAuthReady(ctx context.Context) error {
	if s.oauth == nil {
		return nil
	}
	for _, is := range s.oauth.Issuers() {
		select {
		case <-is.Ready():
		case <-ctx.Done():
			return fmt.Errorf("issuer %s: %w", is.URL, ctx.Err())
		}
	}
	s.publishOAuth()
	return nil
}
