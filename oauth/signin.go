package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"
)

// People sign in to the web view with an issuer's authorization code
// flow (OpenID Connect): PKCE, state and nonce, the code exchanged with
// the web client's secret, the ID token checked with the issuer's keys.
// kfa keeps nothing of the provider's tokens: the ID token's (iss, sub)
// picks the agent, and the sign-in ends in kfa's own session.

// WebClient is the OAuth client the web view signs people in as,
// registered at every issuer it is used with.
type WebClient struct {
	ID     string
	Secret string
	// RedirectURL is the callback the provider sends the browser back to
	// (the public URL + /login/callback).
	RedirectURL string
	// Resource is kfa's resource identifier (the public URL): a sign-in
	// asks for kfa's scopes on it (RFC 8707's resource, and audience,
	// Auth0's name for it), so that the provider says in the access token
	// it returns what the person may do here.
	Resource string
	// AgentScopes are the issuers that cannot grant kfa's scopes to a
	// person (Google): their sign-ins ask for none, and the provider's
	// grant is not read (kfa serve --oauth-web-agent-scopes).
	AgentScopes []string
}

// Flow is a sign-in under way: what the callback must find again. It
// travels in a cookie, sealed (SealFlow), so that any process of the
// deployment can finish a sign-in another began.
type Flow struct {
	Issuer   string    `json:"iss"`
	State    string    `json:"state"`
	Nonce    string    `json:"nonce"`
	Verifier string    `json:"pkce"` // the PKCE code verifier
	Return   string    `json:"ret"`  // the local path to go back to
	Expires  time.Time `json:"exp"`
}

// FlowTTL is how long a person has to sign in at the provider.
const FlowTTL = 10 * time.Minute

// ErrFlow is a callback that does not belong to a sign-in this browser
// began (no or a forged flow cookie, another state, too late).
var ErrFlow = errors.New("this sign-in was not started here, or took too long; start again")

// NewFlow starts a sign-in at issuer that returns to path ret.
func NewFlow(issuer, ret string, now time.Time) Flow {
	return Flow{Issuer: issuer, State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Return: ret,
		Expires: now.Add(FlowTTL).UTC()}
}

func random() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// flowMAC authenticates a sealed flow under key.
func flowMAC(key []byte, payload string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("kfa oauth sign-in flow v1|" + payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SealFlow encodes f for a cookie, authenticated with key (a secret the
// deployment's processes share).
func SealFlow(key []byte, f Flow) string {
	b, _ := json.Marshal(f)
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + flowMAC(key, p)
}

// OpenFlow decodes a sealed flow and checks it is the one the callback's
// state names and that it has not expired: ErrFlow otherwise.
func OpenFlow(key []byte, sealed, state string, now time.Time) (Flow, error) {
	p, mac, ok := strings.Cut(sealed, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(flowMAC(key, p))) {
		return Flow{}, ErrFlow
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return Flow{}, ErrFlow
	}
	var f Flow
	if err := json.Unmarshal(b, &f); err != nil || state == "" || !hmac.Equal([]byte(f.State), []byte(state)) || !now.Before(f.Expires) {
		return Flow{}, ErrFlow
	}
	return f, nil
}

// errNotReady is a sign-in at an issuer kfa has not reached yet.
func (is *Issuer) errNotReady() error {
	return fmt.Errorf("kfa has not reached the provider %s yet (%v); try again in a minute", is.URL, is.err())
}

// Issuer returns the configured issuer named url, nil when none is.
func (v *Verifier) Issuer(url string) *Issuer { return v.issuers[url] }

// grants reports whether a sign-in at is asks the provider for kfa's
// scopes and reads its grant.
func (is *Issuer) grants(c WebClient) bool { return !slices.Contains(c.AgentScopes, is.URL) }

// oauthConfig is the web client's x/oauth2 configuration at is.
func (is *Issuer) oauthConfig(c WebClient) (*oauth2.Config, error) {
	m := is.Metadata()
	if m == nil {
		return nil, is.errNotReady()
	}
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
		return nil, fmt.Errorf("the provider %s offers no authorization code flow (its metadata names no authorization or token endpoint)", is.URL)
	}
	cfg := &oauth2.Config{ClientID: c.ID, ClientSecret: c.Secret, RedirectURL: c.RedirectURL,
		Endpoint: oauth2.Endpoint{AuthURL: m.AuthorizationEndpoint, TokenURL: m.TokenEndpoint},
		Scopes:   []string{oidc.ScopeOpenID, "profile"}}
	if is.grants(c) {
		cfg.Scopes = append(cfg.Scopes, ScopeRead, ScopePost)
	}
	return cfg, nil
}

// AuthCodeURL is where to send the browser to sign in for flow f.
func (is *Issuer) AuthCodeURL(c WebClient, f Flow) (string, error) {
	cfg, err := is.oauthConfig(c)
	if err != nil {
		return "", err
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)}
	if is.grants(c) && c.Resource != "" {
		// RFC 8707's resource, and Auth0's own name for it.
		opts = append(opts, oauth2.SetAuthURLParam("resource", c.Resource), oauth2.SetAuthURLParam("audience", c.Resource))
	}
	return cfg.AuthCodeURL(f.State, opts...), nil
}

// Person is who signed in: the identity, what to call them, and what
// the provider granted them here.
type Person struct {
	Issuer, Subject string
	// Name is the ID token's preferred_username, name or email, in that
	// order ("" when none).
	Name string
	// Scopes are kfa's scopes the provider granted the sign-in (see
	// Grant); none when it granted none, or was not asked (AgentScopes).
	Scopes []string
	// AgentScopes is true for a provider of WebClient.AgentScopes: it
	// was asked for no scope of kfa's, so none is known.
	AgentScopes bool
}

// Exchange finishes flow f with the code the provider sent back: it
// redeems the code (with the PKCE verifier and the client's secret) and
// checks the ID token: signed by the issuer's key, issued by it, for this
// client, not expired, with the flow's nonce.
func (v *Verifier) Exchange(ctx context.Context, c WebClient, f Flow, code string) (Person, error) {
	is := v.issuers[f.Issuer]
	if is == nil {
		return Person{}, ErrFlow
	}
	cfg, err := is.oauthConfig(c)
	if err != nil {
		return Person{}, err
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, v.cfg.HTTPClient)
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return Person{}, fmt.Errorf("the provider %s did not accept the sign-in: %w", is.URL, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Person{}, fmt.Errorf("the provider %s sent no ID token: is the web client allowed the openid scope?", is.URL)
	}
	algs := make([]string, len(Algorithms))
	for i, a := range Algorithms {
		algs[i] = string(a)
	}
	idt, err := oidc.NewVerifier(is.URL, idKeys{is}, &oidc.Config{ClientID: c.ID, SupportedSigningAlgs: algs, Now: v.cfg.Now}).Verify(ctx, raw)
	if err != nil {
		return Person{}, fmt.Errorf("the provider's ID token is not valid: %w", err)
	}
	if !hmac.Equal([]byte(idt.Nonce), []byte(f.Nonce)) {
		return Person{}, errors.New("the provider's ID token is not for this sign-in (its nonce differs)")
	}
	var names struct {
		PreferredUsername string `json:"preferred_username"`
		Name              string `json:"name"`
		Email             string `json:"email"`
	}
	if err := idt.Claims(&names); err != nil {
		return Person{}, fmt.Errorf("the provider's ID token: %w", err)
	}
	p := Person{Issuer: idt.Issuer, Subject: idt.Subject, AgentScopes: !is.grants(c)}
	for _, n := range []string{names.PreferredUsername, names.Name, names.Email} {
		if n != "" {
			p.Name = n
			break
		}
	}
	if is.grants(c) {
		scope, _ := tok.Extra("scope").(string)
		p.Scopes = v.grant(ctx, tok.AccessToken, scope, p)
	}
	return p, nil
}

// grant reads what the provider granted a sign-in of person p: the
// scopes of the access token it returned, when that is an access token
// kfa accepts (Verify: this issuer, kfa's audience, at+jwt) for the same
// subject, as a bearer's scopes are read; otherwise kfa's scopes among
// those the token endpoint said it granted (its answer's scope, RFC 6749
// §5.1), an answer kfa had from the provider itself, over the channel it
// authenticated to. An answer with no scope grants nothing here: the
// RFC's "as requested" is no grant a provider stated.
func (v *Verifier) grant(ctx context.Context, accessToken, scope string, p Person) []string {
	if t, err := v.Verify(ctx, accessToken); err == nil && t.Issuer == p.Issuer && t.Subject == p.Subject {
		return t.Scopes
	}
	var out []string
	for _, s := range []string{ScopeRead, ScopePost} {
		if slices.Contains(strings.Fields(scope), s) {
			out = append(out, s)
		}
	}
	return out
}

// idKeys verifies ID token signatures with an issuer's keys, for go-oidc.
type idKeys struct{ is *Issuer }

// VerifySignature implements oidc.KeySet.
func (k idKeys) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, Algorithms)
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("the ID token has more than one signature")
	}
	h := jws.Signatures[0].Header
	keys, err := k.is.keys.lookup(ctx, k.is.URL, h.KeyID, jose.SignatureAlgorithm(h.Algorithm))
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		if payload, err := jws.Verify(key); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("the ID token's signature does not verify")
}

// LogoutURL is the provider's RP-initiated logout (OpenID Connect
// RP-Initiated Logout 1.0) for a person signed in through web client
// clientID, returning to after (which the provider must know as a post
// logout redirect URI); "" when the provider offers none. kfa keeps no ID
// token to hint with: the provider asks the person to confirm.
func (is *Issuer) LogoutURL(clientID, after string) string {
	m := is.Metadata()
	if m == nil || m.EndSessionEndpoint == "" {
		return ""
	}
	u, err := url.Parse(m.EndSessionEndpoint)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("client_id", clientID)
	if after != "" {
		q.Set("post_logout_redirect_uri", after)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
