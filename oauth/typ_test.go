package oauth

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/oidctest"
)

// TestAccessTokenType: an access token must be typed at+jwt (RFC 9068 §4;
// the media type's case and its "application/" prefix aside): a token
// typed JWT or id_token+jwt, or untyped, is refused, even one the issuer
// signed, and so is a real ID token whose audience is kfa's and whose
// roles are kfa's scopes. An issuer named in PlainJWT (a provider that
// cannot type its access tokens) has its JWT and untyped tokens
// accepted, never one typed as something else; another issuer's are
// still refused.
func TestAccessTokenType(t *testing.T) {
	p := provider(t, oidctest.Options{})
	plain := provider(t, oidctest.Options{PlainJWT: true})
	for _, pr := range []*oidctest.Provider{p, plain} {
		pr.AddClient(oidctest.Client{ID: "kfa-web", Secret: "w", Audience: []string{resource},
			RedirectURIs: []string{resource + "/login/callback"}})
		pr.AddPerson(oidctest.Person{Subject: "u-pat", Username: "pat", Claims: map[string]any{"roles": []string{"read", "post"}}})
	}
	v, err := NewVerifier(Config{Issuers: []string{p.Issuer, plain.Issuer}, PlainJWT: []string{plain.Issuer},
		Audiences: []string{resource, resource + "/mcp"}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	v.Start(context.Background())
	t.Cleanup(v.Stop)
	for _, is := range v.Issuers() {
		select {
		case <-is.Ready():
		case <-time.After(10 * time.Second):
			t.Fatalf("issuer %s not ready: %v", is.URL, is.err())
		}
	}
	good := p.Token(t, "svc", "read", "post")
	if typ := oidctest.Typ(t, good); typ != "at+jwt" {
		t.Fatalf("the provider typed its token %q", typ)
	}
	idToken := p.SignIn(t, "kfa-web", "pat").IDToken
	for _, tc := range []struct {
		name  string
		token string
		want  string // a part of the refusal; "" accepts
	}{
		{"at+jwt", good, ""},
		{"application/at+jwt", p.Retype(t, good, "application/at+jwt"), ""},
		{"AT+JWT", p.Retype(t, good, "AT+JWT"), ""},
		{"Application/At+Jwt", p.Retype(t, good, "Application/At+Jwt"), ""},
		{"JWT", p.Retype(t, good, "JWT"), `the token is typed "JWT", not as an access token (at+jwt, RFC 9068)`},
		{"jwt", p.Retype(t, good, "jwt"), `typed "jwt", not as an access token`},
		{"application/jwt", p.Retype(t, good, "application/jwt"), `typed "application/jwt"`},
		{"untyped", p.Retype(t, good, ""), "the token has no type (typ), so it is not an access token (at+jwt, RFC 9068)"},
		{"id_token+jwt", p.Retype(t, good, "id_token+jwt"), `typed "id_token+jwt"`},
		{"at+jwt with a parameter", p.Retype(t, good, "at+jwt; v=1"), `typed "at+jwt; v=1"`},
		{"application/at+jwt/x", p.Retype(t, good, "application/at+jwt/x"), `typed "application/at+jwt/x"`},
		{"an ID token whose audience is kfa's", idToken, `typed "JWT"`},
		{"plain issuer: JWT", plain.Token(t, "svc", "read", "post"), ""},
		{"plain issuer: untyped", plain.Retype(t, plain.Token(t, "svc", "read"), ""), ""},
		{"plain issuer: application/jwt", plain.Retype(t, plain.Token(t, "svc", "read"), "application/jwt"), ""},
		{"plain issuer: at+jwt", plain.Retype(t, plain.Token(t, "svc", "read"), "at+jwt"), ""},
		{"plain issuer: id_token+jwt", plain.Retype(t, plain.Token(t, "svc", "read"), "id_token+jwt"), `typed "id_token+jwt"`},
		{"plain issuer: logout+jwt", plain.Retype(t, plain.Token(t, "svc", "read"), "logout+jwt"), `typed "logout+jwt"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				mustVerify(t, v, tc.token)
				return
			}
			mustRefuse(t, v, tc.token, tc.want)
		})
	}
	// The refusal says how to accept such tokens, when that is safe to
	// say: for JWT and untyped, not for another type.
	mustRefuse(t, v, p.Retype(t, good, "JWT"), "--oauth-plain-jwt-issuer "+p.Issuer)
}

func TestPlainJWTIssuerMustBeConfigured(t *testing.T) {
	_, err := NewVerifier(Config{Issuers: []string{"https://idp.example.com"}, PlainJWT: []string{"https://other.example.com"},
		Audiences: []string{resource}})
	if err == nil || err.Error() != "oauth-plain-jwt-issuer: https://other.example.com is not an --oauth-issuer" {
		t.Fatalf("%v", err)
	}
}
