package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/ratelimit"
)

// Caller is who sends a request.
type Caller struct {
	Agent *agents.Agent // nil when anonymous
	Addr  string        // client address, for per-address limits
}

// limitKey is what per-caller limits key on: the agent id when known (so
// rotating a token resets nothing), otherwise the address.
func (c Caller) limitKey() string {
	if c.Agent != nil {
		return "agent:" + c.Agent.ID
	}
	return "addr:" + c.Addr
}

// Credential is what a request presents to say who calls, as its
// transport read it (for HTTP: internal/httpkit.Credential).
type Credential struct {
	// Token is the agent token the request sent; "" when none, or when
	// the headers that carry it could not be read (Err).
	Token string
	// Sent is true when the request carried a credential at all, even
	// one that could not be read.
	Sent bool
	// Err says why a credential that was sent could not be read. An
	// *a2a.Error is the request's fault and is answered as it is (two
	// headers naming different tokens); any other error is a failed
	// authentication, counted against the address.
	Err error
	// Addr is the client's address: the key of per-address limits.
	Addr string
}

// QuotaRequest names the per-agent request rate in a ratelimit.Quota.
const QuotaRequest = "request"

// Authenticate resolves who is calling: the one credential check of every
// surface (the A2A bindings, /api/v1, MCP). With required, a request
// without a credential is refused; without it, such a request is
// anonymous. A credential that is sent but bad is always refused: a
// client that sends one wants to know it does not work. An address out of
// failed attempts (Deps.AuthFailures) is refused before its credential is
// looked at, and an authenticated request spends one of its agent's
// requests (Deps.RequestRate), noted for the RateLimit headers.
func (s *Service) Authenticate(ctx context.Context, cred Credential, required bool) (Caller, error) {
	c := Caller{Addr: cred.Addr}
	if !cred.Sent {
		if required {
			return c, a2a.MissingCredential("missing bearer token: send Authorization: Bearer kfa_... (or X-API-Key: kfa_...)")
		}
		return c, nil
	}
	if e, ok := a2a.AsError(cred.Err); ok {
		return c, e
	}
	if s.deps.Agents == nil {
		return c, errors.New("service: no agent service to authenticate with")
	}
	if err := s.authBlocked(c.Addr); err != nil {
		return c, err
	}
	err := cred.Err
	if err == nil {
		var a agents.Agent
		if a, err = s.deps.Agents.Authenticate(ctx, cred.Token); err == nil {
			c.Agent = &a
			return c, s.countRequest(ctx, a.ID)
		}
		if !errors.Is(err, agents.ErrInvalidToken) {
			return c, fmt.Errorf("authenticate: %w", err)
		}
	}
	s.authFailed(c.Addr)
	msg := "invalid, expired or revoked bearer token"
	if !errors.Is(err, agents.ErrInvalidToken) {
		msg = err.Error()
	}
	return c, a2a.Errorf(a2a.Unauthenticated, "%s", msg)
}

// authBlocked refuses an address out of failed authentications: a guess
// made while limited learns nothing.
func (s *Service) authBlocked(addr string) error {
	if l := s.deps.AuthFailures; l != nil {
		if wait, blocked := l.Blocked(addr); blocked {
			return &a2a.Error{Kind: a2a.RateLimited, RetryAfter: wait,
				Message: "too many failed authentications from this address; try again later"}
		}
	}
	return nil
}

// authFailed spends one of the address's failed authentications.
func (s *Service) authFailed(addr string) {
	if l := s.deps.AuthFailures; l != nil {
		l.Allow(addr)
	}
}

// countRequest spends one of the agent's requests, and notes where it
// stands for the RateLimit headers.
func (s *Service) countRequest(ctx context.Context, agentID string) error {
	l := s.deps.RequestRate
	if l == nil {
		return nil
	}
	key := "agent:" + agentID
	wait, ok := l.Allow(key)
	if q, on := l.Quota(QuotaRequest, key); on {
		ratelimit.Note(ctx, q)
	}
	if !ok {
		return &a2a.Error{Kind: a2a.RateLimited, RetryAfter: wait,
			Message: fmt.Sprintf("too many requests: the limit is %s per agent", l)}
	}
	return nil
}
