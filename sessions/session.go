package sessions

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"

	"github.com/kfa-project/kfa/agents"
)

// Sentinel errors. Callers match them with errors.Is.
var (
	// ErrNotFound means there is no live session for the id: unknown,
	// expired or ended by sign-out.
	ErrNotFound = errors.New("no such session")
	// ErrEnded means the session's credential is no longer the agent's
	// current one: the agent was revoked or its token rotated.
	ErrEnded = errors.New("session ended: the agent was revoked or its token rotated")
	// ErrRotatedToken refuses a sign-in with a token that was already
	// rotated (it still works for the API during its grace period, but a
	// new session must start from the agent's current token).
	ErrRotatedToken = errors.New("this token was rotated; sign in with the agent's new token")
	// ErrNoScope refuses a sign-in through a provider that granted it
	// none of its agent's scopes.
	ErrNoScope = errors.New("the provider granted this sign-in neither the read nor the post scope")
)

// DefaultTTL is how long a session lives when the server sets nothing else.
const DefaultTTL = 30 * 24 * time.Hour

// PurgeBatch bounds how many expired sessions one CreateSession deletes,
// so a sign-in never pays for a long backlog at once.
const PurgeBatch = 64

// Digest is the SHA-256 of a session id, the only form in which it is
// stored.
type Digest [sha256.Size]byte

// Session is a stored sign-in.
type Session struct {
	Digest  Digest
	AgentID string
	// Credential is the digest of the token the person signed in with;
	// zero for a sign-in through an OAuth provider (StartAgent), which
	// lives while its agent is active.
	Credential agents.Digest
	CreatedAt  time.Time
	ExpiresAt  time.Time
	// Scopes are what a sign-in through a provider may do: the scopes its
	// provider granted it, within its agent's (ProviderScopes), for as
	// long as it lives. nil for a token sign-in, which may do what its
	// agent may.
	Scopes []agents.Scope
}

// Store persists sessions. Each method is one transaction.
type Store interface {
	// CreateSession stores s. In the same transaction it deletes up to
	// PurgeBatch sessions that expired at or before s.CreatedAt.
	CreateSession(ctx context.Context, s Session) error
	// GetSession returns the session with digest d, expired or not, or
	// ErrNotFound.
	GetSession(ctx context.Context, d Digest) (Session, error)
	// DeleteSession deletes the session with digest d; deleting one that
	// does not exist is not an error.
	DeleteSession(ctx context.Context, d Digest) error
}

// Authenticator finds a credential and its agent by token digest, and an
// agent by id; the agents store is one.
type Authenticator interface {
	Authenticate(ctx context.Context, d agents.Digest) (agents.Agent, agents.Credential, error)
	GetAgent(ctx context.Context, id string) (agents.Agent, error)
}

// idBytes is the entropy of a session id: 256 bits.
const idBytes = 32

// idEncoding writes ids for cookies: URL-safe base64 without padding.
var idEncoding = base64.RawURLEncoding

// idLen is the length of an encoded session id.
var idLen = idEncoding.EncodedLen(idBytes)

// newID makes a fresh session id from the system's secure random source.
func newID() string {
	var b [idBytes]byte
	// crypto/rand.Read never returns an error on supported platforms.
	_, _ = rand.Read(b[:])
	return idEncoding.EncodeToString(b[:])
}

// DigestOf returns the digest of a session id.
func DigestOf(id string) Digest { return sha256.Sum256([]byte(id)) }

// WellFormed reports whether id has the shape of a session id, so that a
// garbage cookie costs no store lookup.
func WellFormed(id string) bool {
	if len(id) != idLen {
		return false
	}
	_, err := idEncoding.DecodeString(id)
	return err == nil
}

// NewNonce returns a random value for a one-off form key (the sign-in
// form's, before any session exists); it has the shape of a session id.
func NewNonce() string { return newID() }

// Form token purposes: a token made for one purpose is refused for another.
const (
	// PurposeSession is the CSRF token of a signed-in person's forms.
	PurposeSession = "session"
	// PurposeSignIn is the token of the sign-in form, keyed by a nonce.
	PurposeSignIn = "sign-in"
)

// FormToken derives the CSRF token for key (a session id, or the sign-in
// form's nonce) and purpose. Only someone who knows key can make it, and
// key lives in an HttpOnly cookie another site cannot read.
func FormToken(key, purpose string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte("kfa web form token v1|" + purpose))
	return idEncoding.EncodeToString(m.Sum(nil))
}

// CheckFormToken reports whether token is FormToken(key, purpose), in
// constant time. An empty key never checks.
func CheckFormToken(key, purpose, token string) bool {
	if key == "" || token == "" {
		return false
	}
	return hmac.Equal([]byte(FormToken(key, purpose)), []byte(token))
}
