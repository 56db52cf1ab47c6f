package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/agents"
)

// Service applies the session rules over a Store.
type Service struct {
	store Store
	auth  Authenticator
	ttl   time.Duration
	now   func() time.Time
}

// NewService returns a Service. ttl is how long a session lives (DefaultTTL
// when zero or negative); now is the clock (time.Now in production).
func NewService(store Store, auth Authenticator, ttl time.Duration, now func() time.Time) *Service {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Service{store: store, auth: auth, ttl: ttl, now: now}
}

// TTL is how long a new session lives.
func (s *Service) TTL() time.Duration { return s.ttl }

// Started is a new session. ID is shown once, to be set as a cookie; only
// its digest is stored.
type Started struct {
	ID        string
	Agent     agents.Agent
	ExpiresAt time.Time
}

// Start signs in with an agent token. It answers agents.ErrInvalidToken for
// a token that does not authenticate (malformed, unknown, revoked, expired)
// and ErrRotatedToken for one in its rotation grace period.
func (s *Service) Start(ctx context.Context, token string) (Started, error) {
	if !agents.WellFormed(token) {
		return Started{}, agents.ErrInvalidToken
	}
	cred := agents.DigestOf(token)
	a, c, err := s.auth.Authenticate(ctx, cred)
	if err != nil {
		if errors.Is(err, agents.ErrInvalidToken) {
			return Started{}, agents.ErrInvalidToken
		}
		return Started{}, fmt.Errorf("sign in: %w", err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	if !a.Active() || !c.ValidAt(now) {
		return Started{}, agents.ErrInvalidToken
	}
	if !c.ExpiresAt.IsZero() {
		return Started{}, ErrRotatedToken
	}
	id := newID()
	sess := Session{Digest: DigestOf(id), AgentID: a.ID, Credential: cred, CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return Started{}, fmt.Errorf("sign in: store session: %w", err)
	}
	return Started{ID: id, Agent: a, ExpiresAt: sess.ExpiresAt}, nil
}

// StartAgent signs in as agent a, whose identity a provider has just
// vouched for (the web's OAuth sign-in), granting the sign-in the scopes
// granted (see ProviderScopes). The session holds no token: it lives
// until it expires, the person signs out, or the agent is revoked, with
// the scopes it began with. A revoked agent is agents.ErrDisabled, a
// grant of none of the agent's scopes ErrNoScope.
func (s *Service) StartAgent(ctx context.Context, a agents.Agent, granted []agents.Scope) (Started, error) {
	if !a.Active() {
		return Started{}, agents.ErrDisabled
	}
	scopes := ProviderScopes(a, granted)
	if len(scopes) == 0 {
		return Started{}, ErrNoScope
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	id := newID()
	sess := Session{Digest: DigestOf(id), AgentID: a.ID, CreatedAt: now, ExpiresAt: now.Add(s.ttl), Scopes: scopes}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return Started{}, fmt.Errorf("sign in: store session: %w", err)
	}
	return Started{ID: id, Agent: sess.Within(a), ExpiresAt: sess.ExpiresAt}, nil
}

// Active is a resumed session with its agent as it is now.
type Active struct {
	ID        string
	Agent     agents.Agent
	ExpiresAt time.Time
}

// Resume returns the live session for id. It answers ErrNotFound for an
// unknown, malformed or expired id, and ErrEnded when the agent was revoked
// or the token the session started from was rotated since.
func (s *Service) Resume(ctx context.Context, id string) (Active, error) {
	if !WellFormed(id) {
		return Active{}, ErrNotFound
	}
	sess, err := s.store.GetSession(ctx, DigestOf(id))
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Active{}, ErrNotFound
		}
		return Active{}, fmt.Errorf("resume session: %w", err)
	}
	now := s.now()
	if !now.Before(sess.ExpiresAt) {
		return Active{}, ErrNotFound
	}
	if sess.Credential == (agents.Digest{}) {
		return s.resumeAgent(ctx, id, sess)
	}
	a, c, err := s.auth.Authenticate(ctx, sess.Credential)
	if err != nil {
		if errors.Is(err, agents.ErrInvalidToken) {
			return Active{}, ErrEnded
		}
		return Active{}, fmt.Errorf("resume session: %w", err)
	}
	// A rotated credential is kept only with an expiry (its grace period):
	// the session must end at the rotation, not when the grace runs out.
	if a.ID != sess.AgentID || !a.Active() || !c.ExpiresAt.IsZero() {
		return Active{}, ErrEnded
	}
	return Active{ID: id, Agent: a, ExpiresAt: sess.ExpiresAt}, nil
}

// resumeAgent resumes a session that holds no token (StartAgent): its
// agent must still be active, and it does what the session was granted.
// One stored before sessions kept their scopes (none) has ended: its
// grant is unknown, so the person signs in again.
func (s *Service) resumeAgent(ctx context.Context, id string, sess Session) (Active, error) {
	if sess.Scopes == nil {
		return Active{}, ErrEnded
	}
	a, err := s.auth.GetAgent(ctx, sess.AgentID)
	if err != nil {
		if errors.Is(err, agents.ErrNotFound) {
			return Active{}, ErrEnded
		}
		return Active{}, fmt.Errorf("resume session: %w", err)
	}
	if !a.Active() {
		return Active{}, ErrEnded
	}
	return Active{ID: id, Agent: sess.Within(a), ExpiresAt: sess.ExpiresAt}, nil
}

// End signs out: the session is deleted. Ending an unknown or malformed id
// is not an error.
func (s *Service) End(ctx context.Context, id string) error {
	if !WellFormed(id) {
		return nil
	}
	if err := s.store.DeleteSession(ctx, DigestOf(id)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
