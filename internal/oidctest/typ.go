package oidctest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/crypto"
)

// The typ header of the provider's access tokens. zitadel's OP writes
// "JWT" on every token it signs, ID tokens and access tokens alike, and
// has no setting for it. A provider that follows RFC 9068 types its
// access tokens "at+jwt", which is how a resource server tells one from
// an ID token; so, unless Options.PlainJWT, the provider re-signs the
// access token of every token endpoint answer as at+jwt, with the same
// key, and the at_hash of an ID token beside it to match (RFC 9068 §2.1,
// OpenID Connect Core §3.1.3.6).

// TypAccessToken is the typ of an RFC 9068 access token.
const TypAccessToken = "at+jwt"

// tokenPath is the OP's token endpoint under the issuer's path.
const tokenPath = "/oauth/token"

// typeTokens answers a token endpoint request with the OP's answer, its
// access token re-signed as at+jwt.
func (p *Provider) typeTokens(w http.ResponseWriter, r *http.Request, next http.Handler) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	var out map[string]any
	if rec.Code == http.StatusOK && json.Unmarshal(body, &out) == nil {
		if at, ok := out["access_token"].(string); ok && strings.Count(at, ".") == 2 {
			typed, err := p.resign(at, TypAccessToken, nil)
			if err != nil {
				http.Error(w, "oidctest: "+err.Error(), http.StatusInternalServerError)
				return
			}
			out["access_token"] = typed
			if idt, ok := out["id_token"].(string); ok {
				if out["id_token"], err = p.resign(idt, "JWT", func(c map[string]any, alg jose.SignatureAlgorithm) error {
					if _, ok := c["at_hash"]; !ok {
						return nil
					}
					h, err := crypto.GetHashAlgorithm(alg)
					c["at_hash"] = crypto.HashString(h, typed, true)
					return err
				}); err != nil {
					http.Error(w, "oidctest: "+err.Error(), http.StatusInternalServerError)
					return
				}
			}
			if body, err = json.Marshal(out); err != nil {
				http.Error(w, "oidctest: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// resign signs token's claims again with the provider's key it names,
// under a header whose typ is typ (none when typ is ""), after edit, if
// any, changed the claims.
func (p *Provider) resign(token, typ string, edit func(claims map[string]any, alg jose.SignatureAlgorithm) error) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", errors.New("not a compact JWS")
	}
	var h struct {
		Kid string `json:"kid"`
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return "", err
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	p.st.mu.Lock()
	var key *signingKey
	for _, k := range p.st.keys {
		if k.id == h.Kid {
			key = k
		}
	}
	p.st.mu.Unlock()
	if key == nil {
		return "", errors.New("no key " + h.Kid)
	}
	if edit != nil {
		var c map[string]any
		d := json.NewDecoder(bytes.NewReader(payload))
		d.UseNumber()
		if err := d.Decode(&c); err != nil {
			return "", err
		}
		if err := edit(c, key.alg); err != nil {
			return "", err
		}
		if payload, err = json.Marshal(c); err != nil {
			return "", err
		}
	}
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: key.alg, Key: &jose.JSONWebKey{Key: key.key, KeyID: key.id}}, opts)
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// Retype signs a token the provider issued again, with the key that
// signed it, under a header whose typ is typ ("" leaves typ out): what a
// provider that types its tokens so would have issued (a resource server
// must refuse "JWT" and "id_token+jwt" as access tokens, RFC 9068 §4).
func (p *Provider) Retype(t testing.TB, token, typ string) string {
	t.Helper()
	out, err := p.resign(token, typ, nil)
	if err != nil {
		t.Fatalf("oidctest: retype %q: %v", token, err)
	}
	return out
}

// Typ is the typ header of a token ("" when it has none).
func Typ(t testing.TB, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Typ string `json:"typ"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h.Typ
}
