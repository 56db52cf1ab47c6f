package oidctest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/crypto"
)

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode
}

// TestProvider: the provider issues JWT access tokens with the claims
// its clients are configured with, signed by a key its JWKS lists, and
// serves the discovery documents asked for.
func TestProvider(t *testing.T) {
	for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA, jose.PS256} {
		t.Run(string(alg), func(t *testing.T) {
			p := Start(t, Options{Alg: alg, Path: "/realms/kfa", Metadata: MetadataBoth})
			p.AddClient(Client{ID: "svc", Secret: "s3cret", Scopes: []string{"read", "post"}, Audience: []string{"https://kfa.test"},
				Username: "build-bot"})
			tok := p.Token(t, "svc", "read", "post", "admin")
			c := Claims(t, tok)
			if c["iss"] != p.Issuer || c["sub"] != "svc" || c["scope"] != "read post" || c["preferred_username"] != "build-bot" ||
				c["client_id"] != "svc" {
				t.Fatalf("claims %v", c)
			}
			if aud, _ := c["aud"].([]any); len(aud) != 1 || aud[0] != "https://kfa.test" {
				t.Fatalf("aud %v", c["aud"])
			}
			exp, _ := c["exp"].(float64)
			if d := time.Until(time.Unix(int64(exp), 0)); d < 4*time.Minute || d > 6*time.Minute {
				t.Fatalf("exp in %s", d)
			}
			parsed, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{alg})
			if err != nil {
				t.Fatal(err)
			}
			var jwks jose.JSONWebKeySet
			if code := getJSON(t, p.JWKSURL(), &jwks); code != 200 {
				t.Fatalf("jwks: %d", code)
			}
			keys := jwks.Key(parsed.Signatures[0].Header.KeyID)
			if len(keys) != 1 {
				t.Fatalf("kid %s not in %+v", parsed.Signatures[0].Header.KeyID, jwks)
			}
			if _, err := parsed.Verify(keys[0]); err != nil {
				t.Fatal(err)
			}
			var meta map[string]any
			for _, u := range []string{p.Issuer + "/.well-known/openid-configuration", "http://" + p.Host() + "/.well-known/oauth-authorization-server/realms/kfa"} {
				if code := getJSON(t, u, &meta); code != 200 || meta["issuer"] != p.Issuer || meta["jwks_uri"] != p.JWKSURL() ||
					meta["token_endpoint"] != p.TokenURL() {
					t.Fatalf("%s: %d %v", u, code, meta)
				}
			}
			old := parsed.Signatures[0].Header.KeyID
			kid := p.RotateKey(t)
			next, err := jose.ParseSignedCompact(p.Token(t, "svc", "read"), []jose.SignatureAlgorithm{alg})
			if err != nil || next.Signatures[0].Header.KeyID != kid || kid == old {
				t.Fatalf("after a rotation: %v, kid %s, want %s", err, next.Signatures[0].Header.KeyID, kid)
			}
			p.SetReachable(false)
			if _, err := http.Get(p.JWKSURL()); err == nil {
				t.Fatal("an unreachable provider answered")
			}
			p.SetReachable(true)
			forged := p.Forge(t, tok, "none", func(c map[string]any) { c["sub"] = "admin" })
			if !strings.HasSuffix(forged, ".") || Claims(t, forged)["sub"] != "admin" {
				t.Fatalf("forged %q", forged)
			}
		})
	}
	t.Run("metadata modes", func(t *testing.T) {
		oidcOnly := Start(t, Options{})
		rfcOnly := Start(t, Options{Metadata: MetadataRFC8414})
		var m map[string]any
		for _, tc := range []struct {
			url  string
			want int
		}{
			{oidcOnly.Issuer + "/.well-known/openid-configuration", 200},
			{oidcOnly.Issuer + "/.well-known/oauth-authorization-server", 404},
			{rfcOnly.Issuer + "/.well-known/openid-configuration", 404},
			{rfcOnly.Issuer + "/.well-known/oauth-authorization-server", 200},
		} {
			if code := getJSON(t, tc.url, &m); code != tc.want {
				t.Errorf("%s: %d, want %d", tc.url, code, tc.want)
			}
		}
	})
}

// TestProviderTypesAccessTokens: the provider's access tokens are typed
// at+jwt (RFC 9068), of client credentials and of a sign-in, and the ID
// token of a sign-in stays JWT with an at_hash of the access token as
// issued; with PlainJWT they stay as zitadel's OP types them, JWT.
// Retype signs a token again under another typ, with the same key.
func TestProviderTypesAccessTokens(t *testing.T) {
	for _, plain := range []bool{false, true} {
		p := Start(t, Options{PlainJWT: plain})
		p.AddClient(Client{ID: "svc", Secret: "s", Scopes: []string{"read"}, Audience: []string{"https://kfa.test"}})
		p.AddClient(Client{ID: "web", Secret: "w", Scopes: []string{"read", "post"}, Audience: []string{"https://kfa.test"},
			RedirectURIs: []string{"https://kfa.test/login/callback"}})
		p.AddPerson(Person{Subject: "u-r", Username: "reader", Scopes: []string{"read"}, Claims: map[string]any{"roles": []string{"read"}}})
		want := TypAccessToken
		if plain {
			want = "JWT"
		}
		if got := Typ(t, p.Token(t, "svc", "read")); got != want {
			t.Fatalf("plain %v: client credentials token typed %q", plain, got)
		}
		tk := p.SignIn(t, "web", "reader", "read", "post")
		if got := Typ(t, tk.AccessToken); got != want || Typ(t, tk.IDToken) != "JWT" {
			t.Fatalf("plain %v: sign-in tokens typed %q and %q", plain, got, Typ(t, tk.IDToken))
		}
		at, id := Claims(t, tk.AccessToken), Claims(t, tk.IDToken)
		if at["scope"] != "read" || at["sub"] != "u-r" {
			t.Fatalf("a read-only person's access token: %v", at)
		}
		if aud, _ := id["aud"].([]any); len(aud) != 2 || aud[0] != "web" || aud[1] != "https://kfa.test" || id["roles"] == nil {
			t.Fatalf("the ID token: %v", id)
		}
		h, _ := jose.ParseSignedCompact(tk.IDToken, []jose.SignatureAlgorithm{jose.RS256})
		alg := jose.SignatureAlgorithm(h.Signatures[0].Header.Algorithm)
		hash, _ := crypto.GetHashAlgorithm(alg)
		if id["at_hash"] != crypto.HashString(hash, tk.AccessToken, true) {
			t.Fatalf("plain %v: at_hash %v does not match the access token", plain, id["at_hash"])
		}
		re := p.Retype(t, tk.AccessToken, "id_token+jwt")
		if Typ(t, re) != "id_token+jwt" || Claims(t, re)["sub"] != "u-r" {
			t.Fatalf("retyped: %q %v", Typ(t, re), Claims(t, re))
		}
		if Typ(t, p.Retype(t, re, "")) != "" {
			t.Fatal("retyped without typ")
		}
	}
}
