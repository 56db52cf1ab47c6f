package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/kfa-project/kfa/internal/jcs"
	"github.com/kfa-project/kfa/internal/prototest"
)

// verifyCard checks the served card's signature as a client would: the
// JWKS from the server, the payload the canonical card without its
// signatures. It returns the key id and the signature.
func verifyCard(t *testing.T, h *harness, body []byte) (kid, sig string) {
	t.Helper()
	var card map[string]any
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	sigs, _ := card["signatures"].([]any)
	if len(sigs) != 1 {
		t.Fatalf("card signatures: %v", card["signatures"])
	}
	s := sigs[0].(map[string]any)
	protected, _ := s["protected"].(string)
	sig, _ = s["signature"].(string)
	delete(card, "signatures")
	unsigned, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := jcs.Canonicalize(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := jose.ParseDetached(protected+".."+sig, payload, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("parse the card's JWS: %v", err)
	}
	hdr := obj.Signatures[0].Protected
	if hdr.Algorithm != "ES256" || hdr.KeyID == "" || hdr.ExtraHeaders["typ"] != "JOSE" ||
		hdr.ExtraHeaders["jku"] != "http://kfa.test/.well-known/jwks.json" {
		t.Fatalf("protected header: %+v", hdr)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(protected)
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil || len(fields) != 4 {
		t.Fatalf("protected header has other members than alg, kid, typ, jku: %s", raw)
	}
	resp, jwks := h.raw("GET", "/.well-known/jwks.json", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("jwks: %d", resp.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		t.Fatal(err)
	}
	keys := set.Key(hdr.KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %s is not in the JWKS %s", hdr.KeyID, jwks)
	}
	if _, err := obj.Verify(keys[0]); err != nil {
		t.Fatalf("the card's signature does not verify: %v", err)
	}
	// A card changed in transit does not.
	card["name"] = "not kfa"
	forged, _ := json.Marshal(card)
	if payload, err = jcs.Canonicalize(forged); err != nil {
		t.Fatal(err)
	}
	if obj, err = jose.ParseDetached(protected+".."+sig, payload, []jose.SignatureAlgorithm{jose.ES256}); err != nil {
		t.Fatal(err)
	}
	if _, err := obj.Verify(keys[0]); err == nil {
		t.Fatal("a changed card verified")
	}
	return hdr.KeyID, sig
}

// TestSignedCard: the card carries a JWS over its canonical form that
// verifies against the served JWKS; it is made once per key (the same
// signature and ETag until a rotation, across restarts too), and the
// official SDK still reads the card.
func TestSignedCard(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	resp, body := h.raw("GET", "/.well-known/agent-card.json", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("card: %d", resp.StatusCode)
	}
	prototest.Valid(t, prototest.AgentCard, body)
	kid, sig := verifyCard(t, h, body)
	etag := resp.Header.Get("ETag")

	// Served again: the same bytes, so the same signature and tag.
	resp, again := h.raw("GET", "/.well-known/agent-card.json", nil, "")
	if string(again) != string(body) || resp.Header.Get("ETag") != etag {
		t.Fatal("the card changed between two requests")
	}
	// The official SDK reads the signed card.
	card, err := agentcard.DefaultResolver.Resolve(ctx, h.url)
	if err != nil {
		t.Fatalf("the SDK cannot read the signed card: %v", err)
	}
	if len(card.Signatures) != 1 || card.Signatures[0].Signature != sig {
		t.Fatalf("the SDK sees signatures %+v", card.Signatures)
	}

	// Signatures are deterministic: a restarted server over the same file
	// serves the same bytes, so caches keep their tag.
	cfg := h.cfg
	h.stop()
	h = startWith(t, cfg)
	resp, again = h.raw("GET", "/.well-known/agent-card.json", nil, "")
	if string(again) != string(body) || resp.Header.Get("ETag") != etag {
		t.Fatal("the signed card changed across a restart")
	}

	// A key rotation re-signs: a new kid, a new signature, a new tag, and
	// it verifies against the JWKS (which still has the old key).
	if _, err := h.admin.RotateSigningKey(ctx); err != nil {
		t.Fatal(err)
	}
	resp, body = h.raw("GET", "/.well-known/agent-card.json", nil, "")
	kid2, sig2 := verifyCard(t, h, body)
	if kid2 == kid || sig2 == sig || resp.Header.Get("ETag") == etag {
		t.Fatalf("after rotation: kid %s→%s, ETag %s→%s", kid, kid2, etag, resp.Header.Get("ETag"))
	}
	// A request with the old tag gets the new card, not 304.
	if resp, _ = h.raw("GET", "/.well-known/agent-card.json", map[string]string{"If-None-Match": etag}, ""); resp.StatusCode != 200 {
		t.Fatalf("old tag after rotation: %d", resp.StatusCode)
	}
}
