package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
)

// AccessTokens verifies the OAuth access tokens of the providers the
// server accepts (kfa serve --oauth-issuer). The server's implementation
// wraps package oauth, which fetches metadata and keys over HTTP; the
// service only asks who a token speaks for.
type AccessTokens interface {
	// Verify checks an access token. A token the verifier refuses is a
	// *TokenRefusal saying why in words the caller can act on.
	Verify(ctx context.Context, token string) (AccessToken, error)
	// LooksLikeAccessToken tells a token worth verifying (a JWT) from
	// one that is not (an opaque token), refused without a look.
	LooksLikeAccessToken(token string) bool
	// Audiences are the audiences a token must name, one of them: what a
	// client asks the provider for.
	Audiences() []string
}

// AccessToken is a verified access token.
type AccessToken struct {
	Identity agents.Identity
	// Name is what to call a new agent of the identity (the token's
	// preferred_username, client_id or azp; "" when none).
	Name string
	// Scopes are the kfa scopes it grants: the caller's agent is narrowed
	// to them.
	Scopes []agents.Scope
}

// TokenRefusal is an access token the verifier does not accept. Scope,
// when set, is the scope a valid token lacks: 403 insufficient_scope
// rather than 401.
type TokenRefusal struct {
	Reason string
	Scope  agents.Scope
}

func (r *TokenRefusal) Error() string { return r.Reason }

func refusef(format string, args ...any) *TokenRefusal {
	return &TokenRefusal{Reason: fmt.Sprintf(format, args...)}
}

// OAuthPolicy says what a verified token's identity may do at its first
// visit.
type OAuthPolicy struct {
	// AutoProvision creates the agent of a new identity (iss, sub) at its
	// first token; off, only identities linked with kfa agent link get in.
	AutoProvision bool
}

// authenticateAccessToken resolves a bearer that is not a kfa token: a
// provider's access token, when the server accepts any. It answers the
// token's agent, narrowed to the token's scopes. A *TokenRefusal (or
// agents.ErrInvalidToken) is a failed authentication, an *a2a.Error is
// answered as it is, any other error is the server's.
func (s *Service) authenticateAccessToken(ctx context.Context, token string) (agents.Agent, error) {
	v := s.deps.AccessTokens
	if v == nil || strings.HasPrefix(token, "kfa_") {
		return agents.Agent{}, agents.ErrInvalidToken
	}
	if !v.LooksLikeAccessToken(token) {
		return agents.Agent{}, opaqueRefusal(v.Audiences())
	}
	t, err := v.Verify(ctx, token)
	if err != nil {
		var r *TokenRefusal
		if errors.As(err, &r) && r.Scope != "" {
			// A valid token that grants nothing of kfa's: the caller
			// authenticated, and lacks a scope (403, not 401).
			return agents.Agent{}, a2a.Errorf(a2a.PermissionDenied, "%s", r.Reason).With("scope", string(r.Scope))
		}
		return agents.Agent{}, err
	}
	a, err := s.deps.Agents.ResolveIdentity(ctx, t.Identity, t.Name, s.deps.OAuth.AutoProvision)
	switch {
	case errors.Is(err, agents.ErrNotLinked):
		return agents.Agent{}, refusef("the token's identity (issuer %q, subject %q) is not linked to an agent on this server, "+
			"which creates none on its own; an operator links it with: kfa agent link AGENT_ID --issuer %s --subject %s",
			t.Identity.Issuer, t.Identity.Subject, t.Identity.Issuer, t.Identity.Subject)
	case errors.Is(err, agents.ErrDisabled):
		return agents.Agent{}, refusef("the agent of the token's identity (issuer %q, subject %q) was revoked on this server; "+
			"its tokens are refused, even unexpired ones", t.Identity.Issuer, t.Identity.Subject)
	case errors.Is(err, agents.ErrInvalidIdentity):
		return agents.Agent{}, refusef("the token's identity is not one kfa can keep: %v", err)
	case errors.Is(err, agents.ErrDuplicateName):
		return agents.Agent{}, refusef("kfa cannot name an agent for the token's identity (issuer %q, subject %q): every name it may take "+
			"is another agent's; an operator creates one and links it with: kfa agent link AGENT_ID --issuer %s --subject %s",
			t.Identity.Issuer, t.Identity.Subject, t.Identity.Issuer, t.Identity.Subject)
	case err != nil:
		return agents.Agent{}, fmt.Errorf("the agent of %s: %w", t.Identity, err)
	}
	a.Scopes = narrow(a.Scopes, t.Scopes)
	return a, nil
}

// opaqueRefusal refuses a bearer that is neither a kfa token nor a JWT:
// most likely an opaque access token, which a provider issues when the
// token request names no resource it mints JWTs for (the request lacks
// resource=, or Auth0's audience=). kfa reads only JWTs, so it says how
// to ask for one.
func opaqueRefusal(audiences []string) *TokenRefusal {
	q := make([]string, len(audiences))
	for i, a := range audiences {
		q[i] = strconv.Quote(a)
	}
	aud := ""
	if len(audiences) > 0 {
		aud = audiences[0]
	}
	return refusef("kfa needs a JWT access token whose audience is %s; this one is not a JWT (an opaque token, which only its provider "+
		"can read): ask the provider for a JWT access token for this server, with resource=%s in the token request (RFC 8707), "+
		"or audience=%s (Auth0)", strings.Join(q, " or "), aud, aud)
}

// narrow keeps the scopes of have that the token grants too: a token
// never does more than its agent, nor more than its scope claim says.
func narrow(have, granted []agents.Scope) []agents.Scope {
	out := make([]agents.Scope, 0, len(have))
	for _, s := range have {
		if slices.Contains(granted, s) {
			out = append(out, s)
		}
	}
	return out
}
