package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Algorithms are the signature algorithms kfa accepts on access and ID
// tokens: asymmetric only, so that nothing but the provider's private
// key signs them ("none" and HMAC are refused).
var Algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256, jose.EdDSA}

// MinRSABits is the smallest RSA key kfa verifies with.
const MinRSABits = 2048

// DefaultRefetchGap is how long kfa waits between two fetches of an
// issuer's key set caused by tokens naming keys it lacks.
const DefaultRefetchGap = time.Minute

// keySet is one issuer's signing keys, fetched from its jwks_uri.
type keySet struct {
	url   string
	fetch func(ctx context.Context, url string, v any) error
	now   func() time.Time
	gap   time.Duration // between two refetches for unknown key ids

	mu sync.Mutex
	// keys are the usable keys (signature keys of a supported type);
	// loaded is false until the first fetch succeeded.
	keys   []jose.JSONWebKey
	loaded bool
	// fetchedAt is the last successful fetch; lastRefetch the last fetch
	// an unknown key id caused (successful or not), and lastErr the error
	// of the last fetch (nil when it succeeded).
	fetchedAt   time.Time
	lastRefetch time.Time
	lastErr     error
	// inflight, when not nil, is closed when the fetch under way ends.
	inflight chan struct{}
}

// load fetches the key set now, whatever the gap (at start, and on the
// periodic refresh). A failure keeps the keys it had.
func (k *keySet) load(ctx context.Context) error {
	k.mu.Lock()
	if wait := k.inflight; wait != nil {
		k.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.lastErr
	}
	done := make(chan struct{})
	k.inflight = done
	k.mu.Unlock()

	keys, err := k.get(ctx)

	k.mu.Lock()
	defer k.mu.Unlock()
	k.inflight = nil
	close(done)
	k.lastErr = err
	if err == nil {
		k.keys, k.loaded, k.fetchedAt = keys, true, k.now()
	}
	return err
}

// get fetches and parses the key set: keys of a type kfa verifies with,
// meant for signatures, RSA ones of at least MinRSABits; others are left
// out, so that one key kfa cannot use does not cost it the rest.
func (k *keySet) get(ctx context.Context) ([]jose.JSONWebKey, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := k.fetch(ctx, k.url, &raw); err != nil {
		return nil, fmt.Errorf("fetch the key set: %w", err)
	}
	var out []jose.JSONWebKey
	for _, r := range raw.Keys {
		var j jose.JSONWebKey
		if err := j.UnmarshalJSON(r); err != nil || !j.Valid() || !j.IsPublic() || j.Use == "enc" {
			continue
		}
		switch pk := j.Key.(type) {
		case *rsa.PublicKey:
			if pk.N.BitLen() < MinRSABits {
				continue
			}
		case *ecdsa.PublicKey:
			if pk.Curve != elliptic.P256() {
				continue
			}
		case ed25519.PublicKey:
		default:
			continue
		}
		out = append(out, j)
	}
	return out, nil
}

// fits reports whether key j can verify a signature of alg.
func fits(j jose.JSONWebKey, alg jose.SignatureAlgorithm) bool {
	if j.Algorithm != "" && j.Algorithm != string(alg) {
		return false
	}
	switch j.Key.(type) {
	case *rsa.PublicKey:
		return alg == jose.RS256 || alg == jose.PS256
	case *ecdsa.PublicKey:
		return alg == jose.ES256
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// match returns the loaded keys that may have signed a token with key id
// kid and algorithm alg (with no kid, every key of the algorithm).
func (k *keySet) match(kid string, alg jose.SignatureAlgorithm) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, j := range k.keys {
		if (kid == "" || j.KeyID == kid) && fits(j, alg) {
			out = append(out, j)
		}
	}
	return out
}

// lookup returns the keys for kid and alg. When it has none, it fetches
// the key set again, unless it did so for an unknown key id less than gap
// ago (a provider's rotation is followed within the gap; a stream of
// tokens with made-up key ids costs the provider one fetch per gap), or
// waits for the fetch under way.
func (k *keySet) lookup(ctx context.Context, issuer, kid string, alg jose.SignatureAlgorithm) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	if keys := k.match(kid, alg); len(keys) > 0 {
		k.mu.Unlock()
		return keys, nil
	}
	now := k.now()
	refetch := k.inflight != nil || k.lastRefetch.IsZero() || now.Sub(k.lastRefetch) >= k.gap
	if refetch && k.inflight == nil {
		k.lastRefetch = now
	}
	k.mu.Unlock()
	var fetchErr error
	if refetch {
		fetchErr = k.load(ctx)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if keys := k.match(kid, alg); len(keys) > 0 {
		return keys, nil
	}
	what := fmt.Sprintf("key id %q", kid)
	if kid == "" {
		what = "no key id, and none of its keys is an " + string(alg) + " key"
	}
	switch {
	case !k.loaded:
		return nil, refusef("kfa has not been able to fetch the keys of issuer %s yet (%v); it keeps trying", issuer, k.lastErr)
	case fetchErr != nil:
		return nil, refusef("the token's %s is not among the keys of issuer %s, and fetching them again failed (%v); kfa keeps the keys it has",
			what, issuer, fetchErr)
	case refetch:
		return nil, refusef("the token's %s is not among the keys of issuer %s, fetched again just now", what, issuer)
	}
	return nil, refusef("the token's %s is not among the keys of issuer %s (fetched again at %s; kfa fetches them at most once every %s)",
		what, issuer, k.lastRefetch.UTC().Format(time.RFC3339), k.gap)
}

// state says when the keys were fetched and the last fetch's error.
func (k *keySet) state() (n int, fetchedAt time.Time, lastErr error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys), k.fetchedAt, k.lastErr
}
