package signing_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func open(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName), store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func jwks(t *testing.T, s *signing.Signer) jose.JSONWebKeySet {
	t.Helper()
	b, err := s.JWKS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for _, k := range set.Keys {
		if !k.IsPublic() || k.Algorithm != signing.Algorithm || k.Use != "sig" {
			t.Fatalf("a JWKS key is not a public ES256 signing key: %s", b)
		}
	}
	return set
}

// verify checks a compact JWS against the set and returns its payload
// and kid.
func verify(t *testing.T, set jose.JSONWebKeySet, jws string) ([]byte, string) {
	t.Helper()
	obj, err := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	kid := obj.Signatures[0].Protected.KeyID
	keys := set.Key(kid)
	if len(keys) != 1 {
		t.Fatalf("kid %q is not in the JWKS", kid)
	}
	payload, err := obj.Verify(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	return payload, kid
}

func TestSignerLifecycle(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	clk := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	s := signing.New(db, 24*time.Hour, clk.now)
	if _, err := s.Sign(ctx, []byte("x"), ""); err == nil {
		t.Fatal("signed without a key")
	}
	for range 2 {
		if err := s.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := s.Keys(ctx)
	if err != nil || len(keys) != 1 || !keys[0].Current {
		t.Fatalf("keys: %+v %v", keys, err)
	}
	first := keys[0].ID
	jws, err := s.SignJSON(ctx, map[string]any{"jti": "d1"})
	if err != nil {
		t.Fatal(err)
	}
	payload, kid := verify(t, jwks(t, s), jws)
	if kid != first || string(payload) != `{"jti":"d1"}` {
		t.Fatalf("payload %s, kid %s", payload, kid)
	}
	obj, err := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	if typ := obj.Signatures[0].Protected.ExtraHeaders["typ"]; typ != "JWT" {
		t.Fatalf("typ %v", typ)
	}

	// Rotation: new signatures name the new key, the old one still verifies.
	clk.add(time.Hour)
	next, err := s.Rotate(ctx)
	if err != nil || next.ID == first || !next.Current {
		t.Fatalf("rotate: %+v %v", next, err)
	}
	set := jwks(t, s)
	if len(set.Keys) != 2 {
		t.Fatalf("the JWKS during the grace period has %d keys", len(set.Keys))
	}
	if _, kid := verify(t, set, jws); kid != first {
		t.Fatal("the old signature no longer verifies")
	}
	jws2, err := s.Sign(ctx, []byte("y"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, kid := verify(t, set, jws2); kid != next.ID {
		t.Fatalf("signed with %s after the rotation", kid)
	}
	keys, err = s.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[1].Current || !keys[1].ExpiresAt.Equal(clk.now().Add(24*time.Hour)) {
		t.Fatalf("keys after a rotation: %+v", keys)
	}

	// After the grace period the old key leaves the JWKS, and the next
	// rotation deletes it.
	clk.add(25 * time.Hour)
	if set := jwks(t, s); len(set.Keys) != 1 || set.Keys[0].KeyID != next.ID {
		t.Fatalf("the JWKS after the grace period: %+v", set.Keys)
	}
	if _, err := s.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.Keys(ctx); err != nil || len(keys) != 2 {
		t.Fatalf("keys after the old one expired: %+v (%v)", keys, err)
	}

	// Another Signer over the same file (another process) sees the keys.
	other := signing.New(db, 24*time.Hour, clk.now)
	if err := other.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if a, b := jwks(t, s), jwks(t, other); len(a.Keys) != len(b.Keys) || a.Keys[0].KeyID != b.Keys[0].KeyID {
		t.Fatal("two signers over one store disagree")
	}
}
