package signing_test

import (
	"context"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kfa-project/kfa/signing"
)

func TestSignDetached(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	s := signing.New(open(t), time.Hour, clk.now)
	if _, err := s.CurrentKeyID(ctx); err == nil {
		t.Fatal("a current key before Ensure")
	}
	if _, err := s.SignDetached(ctx, []byte("x"), "", nil); err == nil {
		t.Fatal("signed without a key")
	}
	if err := s.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"name":"kfa"}`)
	d, err := s.SignDetached(ctx, payload, "JOSE", map[string]string{"jku": "https://kfa.example/.well-known/jwks.json"})
	if err != nil {
		t.Fatal(err)
	}
	kid, err := s.CurrentKeyID(ctx)
	if err != nil || d.KeyID != kid {
		t.Fatalf("key %s, current %s %v", d.KeyID, kid, err)
	}
	obj, err := jose.ParseDetached(d.Protected+".."+d.Signature, payload, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := obj.Signatures[0].Protected
	if h.KeyID != kid || h.Algorithm != "ES256" || h.ExtraHeaders["typ"] != "JOSE" ||
		h.ExtraHeaders["jku"] != "https://kfa.example/.well-known/jwks.json" {
		t.Fatalf("protected header: %+v", h)
	}
	// Deterministic: the same payload and key sign alike.
	if again, err := s.SignDetached(ctx, payload, "JOSE", map[string]string{"jku": "https://kfa.example/.well-known/jwks.json"}); err != nil || again != d {
		t.Fatalf("a second signature differs: %+v %v", again, err)
	}
	set := jwks(t, s)
	if _, err := obj.Verify(set.Key(kid)[0]); err != nil {
		t.Fatalf("does not verify: %v", err)
	}
	// Another payload does not verify against the signature.
	other, err := jose.ParseDetached(d.Protected+".."+d.Signature, []byte(`{"name":"kfb"}`), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Verify(set.Key(kid)[0]); err == nil {
		t.Fatal("a changed payload verified")
	}
	// After a rotation the current key changes.
	if _, err := s.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if now, err := s.CurrentKeyID(ctx); err != nil || now == kid {
		t.Fatalf("the current key did not change on rotation (%v)", err)
	}
}

// TestRotateInOneMillisecond: keys made in the same millisecond (the
// clock here does not move) are stored in id order, yet the key that
// signs is always the one the last rotation made.
func TestRotateInOneMillisecond(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	s := signing.New(open(t), time.Hour, clk.now)
	if err := s.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		k, err := s.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now, err := s.CurrentKeyID(ctx)
		if err != nil || now != k.ID {
			t.Fatalf("rotation %d made %s; the current key is %q (%v)", i+1, k.ID, now, err)
		}
		d, err := s.SignDetached(ctx, []byte("x"), "", nil)
		if err != nil || d.KeyID != k.ID {
			t.Fatalf("rotation %d: signed with %q (%v), want %s", i+1, d.KeyID, err, k.ID)
		}
	}
}
