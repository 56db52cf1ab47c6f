package signing

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Algorithm is the JWS algorithm of every key: ECDSA P-256 with SHA-256.
const Algorithm = "ES256"

// KeyRecord is a key as stored. Private is the PKCS #8 DER of the
// private key: the database holds it, so backups of the database do too.
type KeyRecord struct {
	ID        string
	Algorithm string
	Private   []byte
	CreatedAt time.Time
	// RetiredAt is when a newer key replaced this one; zero for the
	// current key.
	RetiredAt time.Time
}

// Store persists the keys. Each method is one transaction.
type Store interface {
	// SigningKeys returns every stored key, newest first.
	SigningKeys(ctx context.Context) ([]KeyRecord, error)
	// EnsureSigningKey stores k unless a current key exists; created says
	// whether it did.
	EnsureSigningKey(ctx context.Context, k KeyRecord) (created bool, err error)
	// RotateSigningKey stores k as the current key, retires the key that
	// was current at k.CreatedAt, and deletes the keys retired before
	// purgeBefore, in one transaction.
	RotateSigningKey(ctx context.Context, k KeyRecord, purgeBefore time.Time) error
}

// ErrNoKey is a Signer used before any key exists (Ensure makes one).
var ErrNoKey = errors.New("signing: no signing key; kfa serve makes one on start")

// KeyInfo describes a key without its private part.
type KeyInfo struct {
	ID        string
	Algorithm string
	CreatedAt time.Time
	RetiredAt time.Time // zero for the current key
	// ExpiresAt is when a retired key leaves the JWKS; zero for the
	// current key.
	ExpiresAt time.Time
	Current   bool
}

// DefaultGrace is how long a retired key stays in the JWKS.
const DefaultGrace = 7 * 24 * time.Hour

// reloadEvery bounds how stale the cached keys may be when another
// process rotated them.
const reloadEvery = time.Minute

// Signer signs with the current key and lists the public keys. It caches
// the parsed keys, reloading them after a rotation made through it and
// at least every minute. It is safe for concurrent use.
type Signer struct {
	store Store
	grace time.Duration
	now   func() time.Time

	mu       sync.Mutex
	keys     []key // newest first
	loadedAt time.Time
}

type key struct {
	rec  KeyRecord
	priv *ecdsa.PrivateKey
}

// New returns a Signer over store. grace is how long a retired key stays
// in the JWKS (DefaultGrace when 0).
func New(store Store, grace time.Duration, now func() time.Time) *Signer {
	if grace <= 0 {
		grace = DefaultGrace
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{store: store, grace: grace, now: now}
}

// NewKey makes a new P-256 key record created at now; its id is the
// RFC 7638 thumbprint of its public key.
func NewKey(now time.Time) (KeyRecord, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyRecord{}, fmt.Errorf("signing: generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return KeyRecord{}, fmt.Errorf("signing: encode key: %w", err)
	}
	tp, err := (&jose.JSONWebKey{Key: &priv.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		return KeyRecord{}, fmt.Errorf("signing: thumbprint: %w", err)
	}
	return KeyRecord{ID: base64.RawURLEncoding.EncodeToString(tp), Algorithm: Algorithm, Private: der,
		CreatedAt: now.UTC().Truncate(time.Millisecond)}, nil
}

// Ensure makes the first key when the store has none.
func (s *Signer) Ensure(ctx context.Context) error {
	k, err := NewKey(s.now())
	if err != nil {
		return err
	}
	if _, err := s.store.EnsureSigningKey(ctx, k); err != nil {
		return fmt.Errorf("signing: store the first key: %w", err)
	}
	return s.reload(ctx)
}

// Rotate makes a new current key; the old one stays in the JWKS for the
// grace period, and keys retired longer ago than that are deleted.
func (s *Signer) Rotate(ctx context.Context) (KeyInfo, error) {
	now := s.now()
	k, err := NewKey(now)
	if err != nil {
		return KeyInfo{}, err
	}
	if err := s.store.RotateSigningKey(ctx, k, now.Add(-s.grace)); err != nil {
		return KeyInfo{}, fmt.Errorf("signing: rotate: %w", err)
	}
	if err := s.reload(ctx); err != nil {
		return KeyInfo{}, err
	}
	return s.info(k), nil
}

func (s *Signer) info(k KeyRecord) KeyInfo {
	in := KeyInfo{ID: k.ID, Algorithm: k.Algorithm, CreatedAt: k.CreatedAt, RetiredAt: k.RetiredAt, Current: k.RetiredAt.IsZero()}
	if !in.Current {
		in.ExpiresAt = k.RetiredAt.Add(s.grace)
	}
	return in
}

// reload reads and parses the keys.
func (s *Signer) reload(ctx context.Context) error {
	recs, err := s.store.SigningKeys(ctx)
	if err != nil {
		return fmt.Errorf("signing: read keys: %w", err)
	}
	keys := make([]key, 0, len(recs))
	for _, r := range recs {
		p, err := x509.ParsePKCS8PrivateKey(r.Private)
		if err != nil {
			return fmt.Errorf("signing: key %s: %w", r.ID, err)
		}
		priv, ok := p.(*ecdsa.PrivateKey)
		if !ok || r.Algorithm != Algorithm {
			return fmt.Errorf("signing: key %s is not an %s key", r.ID, Algorithm)
		}
		keys = append(keys, key{rec: r, priv: priv})
	}
	s.mu.Lock()
	s.keys, s.loadedAt = keys, s.now()
	s.mu.Unlock()
	return nil
}

// current returns the cached keys, reloading them when stale.
func (s *Signer) current(ctx context.Context) ([]key, error) {
	s.mu.Lock()
	stale := s.loadedAt.IsZero() || s.now().Sub(s.loadedAt) >= reloadEvery
	s.mu.Unlock()
	if stale {
		if err := s.reload(ctx); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys, nil
}

// signingKey is the key that signs now: the one not retired. Not simply
// the newest: keys made in the same millisecond (a rotation right after
// the first key, or on another process whose clock is behind) are ordered
// by id, so the retired one can come first.
func (s *Signer) signingKey(ctx context.Context) (key, error) {
	keys, err := s.current(ctx)
	if err != nil {
		return key{}, err
	}
	for _, k := range keys {
		if k.rec.RetiredAt.IsZero() {
			return k, nil
		}
	}
	return key{}, ErrNoKey
}

// Sign signs payload with the current key: a compact JWS (ES256) whose
// protected header names the key (kid) and, when typ is not empty, the
// type (typ).
func (s *Signer) Sign(ctx context.Context, payload []byte, typ string) (string, error) {
	cur, err := s.signingKey(ctx)
	if err != nil {
		return "", err
	}
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: cur.priv, KeyID: cur.rec.ID}}, opts)
	if err != nil {
		return "", fmt.Errorf("signing: key %s: %w", cur.rec.ID, err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("signing: sign: %w", err)
	}
	return obj.CompactSerialize()
}

// SignJSON signs the JSON encoding of claims as a JWT (typ "JWT").
func (s *Signer) SignJSON(ctx context.Context, claims any) (string, error) {
	b, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	return s.Sign(ctx, b, "JWT")
}

// Keys describes the stored keys, newest first, without their private
// parts.
func (s *Signer) Keys(ctx context.Context) ([]KeyInfo, error) {
	keys, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]KeyInfo, len(keys))
	for i, k := range keys {
		out[i] = s.info(k.rec)
	}
	return out, nil
}

// JWKS returns the JSON Web Key Set of the public keys that verify: the
// current key and the retired ones still within their grace period.
func (s *Signer) JWKS(ctx context.Context) ([]byte, error) {
	keys, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range keys {
		if !k.rec.RetiredAt.IsZero() && !now.Before(k.rec.RetiredAt.Add(s.grace)) {
			continue
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.rec.ID, Algorithm: Algorithm, Use: "sig"})
	}
	return json.Marshal(set)
}
