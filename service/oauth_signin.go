package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/sessions"
)

// People sign in to the web view with a provider (kfa serve
// --oauth-web-client-id): authorization code with PKCE, state and nonce,
// ending in the same server-side session as a token sign-in, for the
// agent of the person's identity (iss, sub). The server implements the
// client side over package oauth (WebSignIn); the service decides which
// agent that is and starts the session.

// WebSignIn is the web view's OAuth client at the providers.
type WebSignIn interface {
	// Providers are the issuers a person may sign in with.
	Providers() []SignInProvider
	// Begin starts a sign-in at issuer that returns to path next: where
	// to send the browser, and the sealed flow the callback needs back
	// (a cookie's value).
	Begin(issuer, next string) (redirect, sealed string, err error)
	// Finish checks the callback and answers who signed in and where
	// they were going. A callback that belongs to no sign-in of this
	// browser (its state is not the sealed flow's) is ErrSignInFlow,
	// whatever else it carries; one with the provider's error is a
	// *ProviderError.
	Finish(ctx context.Context, cb Callback) (SignedInPerson, error)
	// LogoutURL is the provider's RP-initiated logout for a person signed
	// in with issuer, returning to after; "" when it offers none.
	LogoutURL(issuer, after string) string
}

// SignInProvider is a provider the sign-in page offers.
type SignInProvider struct {
	Issuer string
	// Name is what the button says: "Sign in with <Name>".
	Name string
}

// SignedInPerson is who a provider vouched for, and what it granted them.
type SignedInPerson struct {
	Identity agents.Identity
	// Name is what to call a new agent of theirs.
	Name string
	// Next is the path the sign-in returns to.
	Next string
	// Scopes are kfa's scopes the provider granted the sign-in: the
	// session does no more (sessions.ProviderScopes).
	Scopes []agents.Scope
	// AgentScopes is true for a provider that cannot grant kfa's scopes
	// (kfa serve --oauth-web-agent-scopes): the session holds its agent's.
	AgentScopes bool
}

// Callback is what came back to /login/callback: the sealed flow (the
// cookie's value), and what the provider sent in the query.
type Callback struct {
	Sealed, State, Code string
	// Error is the provider's error code (RFC 6749 §4.1.2.1) when it did
	// not sign the person in. Anyone can write it in a link: it is only
	// ever compared, never shown.
	Error string
}

// ProviderError is the provider's answer, on the callback of a sign-in
// under way, that it did not sign the person in. Code is its error code
// as the query gave it: a surface shows a fixed message for a code it
// knows, and never the code itself.
type ProviderError struct{ Code string }

func (e *ProviderError) Error() string { return "the provider did not sign the person in" }

// ErrSignInFlow is a callback that belongs to no sign-in this browser
// started (no cookie, another state, expired): the person starts again.
var ErrSignInFlow = errors.New("this sign-in was not started here, or took too long; start it again")

// SignInProviders are the providers the sign-in page offers; none without
// --oauth-web-client-id.
func (s *Service) SignInProviders() []SignInProvider {
	if s.deps.WebSignIn == nil {
		return nil
	}
	return s.deps.WebSignIn.Providers()
}

// BeginProviderSignIn starts a sign-in at issuer: where to send the
// browser, and the value of the cookie that ties the callback to it.
func (s *Service) BeginProviderSignIn(issuer, next string) (redirect, sealed string, err error) {
	if s.deps.WebSignIn == nil {
		return "", "", errors.New("no OAuth provider is configured for sign-in")
	}
	return s.deps.WebSignIn.Begin(issuer, next)
}

// FinishProviderSignIn ends a sign-in at a provider: the person's
// identity is resolved to its agent as an access token's is (created at
// its first visit unless --oauth-auto-provision=false; a revoked agent is
// refused) and a session starts for it, holding the scopes the provider
// granted the sign-in, within the agent's (none granted: refused). A refusal is a *TokenRefusal, the
// provider's own a *ProviderError; the path to return to comes back with
// the session. Two answers leave the sign-in under way as it was (a
// surface keeps its cookie): ErrSignInFlow, for a callback of no sign-in
// of this browser, and an address out of failed attempts (RateLimited);
// every other answer ends it.
func (s *Service) FinishProviderSignIn(ctx context.Context, cb Callback, addr string) (sessions.Started, string, error) {
	if s.deps.WebSignIn == nil {
		return sessions.Started{}, "", ErrSignInFlow
	}
	if err := s.authBlocked(addr); err != nil {
		return sessions.Started{}, "", err
	}
	p, err := s.deps.WebSignIn.Finish(ctx, cb)
	if err != nil {
		return sessions.Started{}, "", err
	}
	a, err := s.deps.Agents.ResolveIdentity(ctx, p.Identity, p.Name, s.deps.OAuth.AutoProvision)
	switch {
	case errors.Is(err, agents.ErrNotLinked):
		s.authFailed(addr)
		return sessions.Started{}, p.Next, refusef("your account at %s (subject %q) has no agent on this server, which creates none on its own; "+
			"an operator links it with: kfa agent link AGENT_ID --issuer %s --subject %s", p.Identity.Issuer, p.Identity.Subject,
			p.Identity.Issuer, p.Identity.Subject)
	case errors.Is(err, agents.ErrDisabled):
		s.authFailed(addr)
		return sessions.Started{}, p.Next, refusef("the agent of your account at %s was revoked on this server", p.Identity.Issuer)
	case errors.Is(err, agents.ErrDuplicateName):
		return sessions.Started{}, p.Next, refusef("kfa cannot name an agent for your account at %s (subject %q): every name it may take "+
			"is another agent's; an operator creates one and links it with: kfa agent link AGENT_ID --issuer %s --subject %s",
			p.Identity.Issuer, p.Identity.Subject, p.Identity.Issuer, p.Identity.Subject)
	case err != nil:
		return sessions.Started{}, p.Next, fmt.Errorf("the agent of %s: %w", p.Identity, err)
	}
	granted := p.Scopes
	if p.AgentScopes {
		granted = a.Scopes
	}
	st, err := s.deps.Sessions.StartAgent(ctx, a, granted)
	if errors.Is(err, sessions.ErrNoScope) {
		return sessions.Started{}, p.Next, refusef("your account at %s is granted neither the read nor the post scope on this server, "+
			"so signing in would let you do nothing here; the provider's administrator grants them (see docs/oauth.md)", p.Identity.Issuer)
	}
	return st, p.Next, err
}

// ProviderLogoutURL is where a person signed in as agent a may also sign
// out of its provider (RP-initiated logout), returning to after; "" when
// a has no identity of a sign-in provider, or the provider offers none.
func (s *Service) ProviderLogoutURL(a agents.Agent, after string) string {
	if s.deps.WebSignIn == nil || a.Issuer == "" {
		return ""
	}
	return s.deps.WebSignIn.LogoutURL(a.Issuer, after)
}
