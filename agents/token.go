package agents

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"
)

// TokenPrefix starts every kfa bearer token.
const TokenPrefix = "kfa_"

// tokenBytes is the entropy of a token: 256 bits.
const tokenBytes = 32

// tokenEncoding is lower-case base32 without padding: URL- and header-safe.
var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// TokenLen is the length of a token in characters.
var TokenLen = len(TokenPrefix) + tokenEncoding.EncodedLen(tokenBytes)

// Digest is the SHA-256 of a token, the only form in which it is stored.
type Digest [sha256.Size]byte

// DigestOf returns the digest of token.
func DigestOf(token string) Digest { return sha256.Sum256([]byte(token)) }

// NewToken makes a fresh token from the system's secure random source.
func NewToken() string {
	var b [tokenBytes]byte
	// crypto/rand.Read never returns an error on supported platforms.
	_, _ = rand.Read(b[:])
	return TokenPrefix + tokenEncoding.EncodeToString(b[:])
}

// WellFormed reports whether token has the shape of a kfa token. It lets
// the server refuse garbage without a store lookup.
func WellFormed(token string) bool {
	if len(token) != TokenLen || !strings.HasPrefix(token, TokenPrefix) {
		return false
	}
	for i := len(TokenPrefix); i < len(token); i++ {
		c := token[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// Credential is a stored token digest. A zero ExpiresAt never expires; a
// rotated credential kept for a grace period expires at ExpiresAt.
type Credential struct {
	Digest    Digest    `json:"-"`
	AgentID   string    `json:"agentId"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// ValidAt reports whether the credential may be used at t.
func (c Credential) ValidAt(t time.Time) bool {
	return c.ExpiresAt.IsZero() || t.Before(c.ExpiresAt)
}
