package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/jcs"
	"github.com/kfa-project/kfa/signing"
)

// CardSigner signs the agent card with kfa's signing keys (what
// signing.Signer does).
type CardSigner interface {
	// CurrentKeyID is the key a signature made now would name.
	CurrentKeyID(ctx context.Context) (string, error)
	SignDetached(ctx context.Context, payload []byte, typ string, extra map[string]string) (signing.Detached, error)
}

// signedCards holds the signed card of the current key: a request serves
// it as is, and only a new key (a rotation) makes a new signature. A
// card that changes (SetOAuth) comes with a new, empty cache, so the key
// is all the cache depends on.
type signedCards struct {
	mu      sync.Mutex // one signer at a time
	current atomic.Pointer[signedCard]
}

type signedCard struct {
	kid  string
	card Card
}

// cardPayload is what the card's signature covers: the RFC 8785 canonical
// JSON of the card without signatures (unset fields are never encoded).
func cardPayload(c Card) ([]byte, error) {
	return jcs.Canonicalize(c.JSON)
}

// SignedCard returns the public card with its signature, made with the
// current signing key, its JSON and its entity tag (of the signed JSON:
// the tag and the signature change together). Without a signer it is
// Card.
func (s *Service) SignedCard(ctx context.Context) (Card, error) {
	pub := s.pub.Load()
	if s.deps.Signer == nil {
		return pub.card, nil
	}
	kid, err := s.deps.Signer.CurrentKeyID(ctx)
	if err != nil {
		return Card{}, fmt.Errorf("sign agent card: %w", err)
	}
	signed := &pub.signed
	if c := signed.current.Load(); c != nil && c.kid == kid {
		return c.card, nil
	}
	signed.mu.Lock()
	defer signed.mu.Unlock()
	if c := signed.current.Load(); c != nil && c.kid == kid {
		return c.card, nil
	}
	payload, err := cardPayload(pub.card)
	if err != nil {
		return Card{}, fmt.Errorf("sign agent card: %w", err)
	}
	d, err := s.deps.Signer.SignDetached(ctx, payload, "JOSE", map[string]string{"jku": s.cfg.PublicURL + JWKSPath})
	if err != nil {
		return Card{}, fmt.Errorf("sign agent card: %w", err)
	}
	card := pub.card.Card
	card.Signatures = []a2a.AgentCardSignature{{Protected: d.Protected, Signature: d.Signature}}
	out, err := encodeCard(card, s.deps.Now())
	if err != nil {
		return Card{}, fmt.Errorf("sign agent card: %w", err)
	}
	signed.current.Store(&signedCard{kid: d.KeyID, card: out})
	return out, nil
}

// JWKSPath is where the public keys that verify kfa's signatures are
// served.
const JWKSPath = "/.well-known/jwks.json"

// encodeCard makes a card's JSON and entity tag; made is when.
func encodeCard(card a2a.AgentCard, made time.Time) (Card, error) {
	b, err := json.Marshal(card)
	if err != nil {
		return Card{}, err
	}
	sum := sha256.Sum256(b)
	// Clipped: a writer that appends a newline must copy, not write into
	// the shared array.
	return Card{Card: card, JSON: b[:len(b):len(b)], ETag: `"` + hex.EncodeToString(sum[:12]) + `"`,
		Modified: made.UTC().Truncate(time.Second)}, nil
}
