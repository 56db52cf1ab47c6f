package service

import (
	"context"
	"errors"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/sessions"
)

// The web view's sign-in: a person pastes an agent token once, and a
// session cookie stands for it after. The token is checked, and a failed
// attempt counted against the address, with the same budget as a bearer
// token's (Authenticate).

// SignIn starts a web session from an agent token sent from addr. An
// address out of failed attempts is refused (RateLimited) before the
// token is looked at; a token that does not authenticate
// (agents.ErrInvalidToken) costs the address one attempt; one in its
// rotation grace is sessions.ErrRotatedToken.
func (s *Service) SignIn(ctx context.Context, token, addr string) (sessions.Started, error) {
	if err := s.authBlocked(addr); err != nil {
		return sessions.Started{}, err
	}
	st, err := s.deps.Sessions.Start(ctx, token)
	if errors.Is(err, agents.ErrInvalidToken) {
		s.authFailed(addr)
	}
	return st, err
}

// ResumeSession returns the live session of a cookie's id with its agent
// as it is now: sessions.ErrNotFound for an unknown or expired one,
// sessions.ErrEnded when the agent was revoked or its token rotated.
func (s *Service) ResumeSession(ctx context.Context, id string) (sessions.Active, error) {
	return s.deps.Sessions.Resume(ctx, id)
}

// SignOut ends a session; ending an unknown one is not an error.
func (s *Service) SignOut(ctx context.Context, id string) error {
	return s.deps.Sessions.End(ctx, id)
}

// SessionTTL is how long a new web session lives.
func (s *Service) SessionTTL() time.Duration { return s.deps.Sessions.TTL() }
