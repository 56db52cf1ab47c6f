package oidctest

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
)

// Forge rewrites a token the provider issued: its claims with edit
// applied, under a header of alg "none" (no signature) or "HS256" signed
// with the provider's current public key as the HMAC secret (the
// algorithm confusion attack on verifiers that let the token pick the
// algorithm). No provider issues such tokens; they are what an attacker
// sends.
func (p *Provider) Forge(t testing.TB, token, alg string, edit func(claims map[string]any)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %q", token)
	}
	var header, claims map[string]any
	for i, v := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	if edit != nil {
		edit(claims)
	}
	header["alg"] = alg
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(header) + "." + enc(claims)
	switch alg {
	case "none":
		return input + "."
	case "HS256":
		m := hmac.New(sha256.New, p.PublicKeyPEM(t))
		m.Write([]byte(input))
		return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	t.Fatalf("oidctest: cannot forge alg %s", alg)
	return ""
}

// PublicKeyPEM is the current signing key's public key, PEM encoded, as
// a verifier might hold it.
func (p *Provider) PublicKeyPEM(t testing.TB) []byte {
	t.Helper()
	p.st.mu.Lock()
	k := p.st.keys[len(p.st.keys)-1]
	p.st.mu.Unlock()
	der, err := x509.MarshalPKIXPublicKey(k.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Claims decodes a token's claims without verifying it (for tests that
// look at what the provider wrote).
func Claims(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}
