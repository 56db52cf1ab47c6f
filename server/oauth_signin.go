package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"net/url"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/oauth"
	"github.com/kfa-project/kfa/service"
)

// webSignIn is service.WebSignIn over an oauth.Verifier: the web view's
// client at the providers (kfa serve --oauth-web-client-id).
type webSignIn struct {
	v      *oauth.Verifier
	client oauth.WebClient
	// key authenticates the sealed flow cookie. Derived from the client's
	// secret, every process of a deployment shares it, so a callback may
	// reach another process than the one the sign-in began on; a public
	// client (no secret) gets a key of this process's own.
	key []byte
	now func() time.Time
}

// newWebSignIn is the sign-in client of cfg; nil without a web client.
func (s *Server) newWebSignIn() service.WebSignIn {
	if s.oauth == nil || s.cfg.OAuthWebClientID == "" || !s.cfg.Web {
		return nil
	}
	var key []byte
	if sec := s.cfg.OAuthWebClientSecret; sec != "" {
		k := sha256.Sum256([]byte("kfa web sign-in flow key\x00" + s.cfg.OAuthWebClientID + "\x00" + sec))
		key = k[:]
	} else {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return &webSignIn{v: s.oauth, key: key, now: time.Now, client: oauth.WebClient{ID: s.cfg.OAuthWebClientID,
		Secret: s.cfg.OAuthWebClientSecret, RedirectURL: s.cfg.PublicURL + "/login/callback", Resource: s.cfg.PublicURL,
		AgentScopes: s.cfg.OAuthWebAgentScopes}}
}

// Providers implements service.WebSignIn: every configured issuer, named
// by its host.
func (w *webSignIn) Providers() []service.SignInProvider {
	var out []service.SignInProvider
	for _, is := range w.v.Issuers() {
		name := is.URL
		if u, err := url.Parse(is.URL); err == nil && u.Host != "" {
			name = u.Host
		}
		out = append(out, service.SignInProvider{Issuer: is.URL, Name: name})
	}
	return out
}

// Begin implements service.WebSignIn.
func (w *webSignIn) Begin(issuer, next string) (string, string, error) {
	is := w.v.Issuer(issuer)
	if is == nil {
		return "", "", service.ErrSignInFlow
	}
	f := oauth.NewFlow(issuer, next, w.now())
	u, err := is.AuthCodeURL(w.client, f)
	if err != nil {
		return "", "", err
	}
	return u, oauth.SealFlow(w.key, f), nil
}

// Finish implements service.WebSignIn.
func (w *webSignIn) Finish(ctx context.Context, cb service.Callback) (service.SignedInPerson, error) {
	// The state first: what else the callback says counts only for the
	// sign-in it belongs to.
	f, err := oauth.OpenFlow(w.key, cb.Sealed, cb.State, w.now())
	if errors.Is(err, oauth.ErrFlow) {
		return service.SignedInPerson{}, service.ErrSignInFlow
	}
	if err != nil {
		return service.SignedInPerson{}, err
	}
	if cb.Error != "" {
		return service.SignedInPerson{Next: f.Return}, &service.ProviderError{Code: cb.Error}
	}
	p, err := w.v.Exchange(ctx, w.client, f, cb.Code)
	if err != nil {
		return service.SignedInPerson{Next: f.Return}, err
	}
	out := service.SignedInPerson{Identity: agents.Identity{Issuer: p.Issuer, Subject: p.Subject}, Name: p.Name, Next: f.Return,
		AgentScopes: p.AgentScopes}
	for _, sc := range p.Scopes {
		out.Scopes = append(out.Scopes, agents.Scope(sc))
	}
	return out, nil
}

// LogoutURL implements service.WebSignIn.
func (w *webSignIn) LogoutURL(issuer, after string) string {
	is := w.v.Issuer(issuer)
	if is == nil {
		return ""
	}
	return is.LogoutURL(w.client.ID, after)
}
