package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kfa-project/kfa/internal/oidctest"
)

const resource = "https://kfa.example.com"

// clock is a settable clock that starts at the real time (the provider
// stamps its tokens with it).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a log a test reads while the verifier writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// provider runs a provider with the clients the tests use: svc (read and
// post, for kfa), reader (read only), elsewhere (another audience),
// stale (tokens that expired five minutes ago).
func provider(t *testing.T, opts oidctest.Options) *oidctest.Provider {
	t.Helper()
	p := oidctest.Start(t, opts)
	for _, c := range []oidctest.Client{
		{ID: "svc", Secret: "svc-secret", Scopes: []string{"read", "post"}, Audience: []string{resource}, Username: "build-bot"},
		{ID: "reader", Secret: "reader-secret", Scopes: []string{"read"}, Audience: []string{resource + "/mcp"}},
		{ID: "elsewhere", Secret: "elsewhere-secret", Scopes: []string{"read", "post"}, Audience: []string{"https://other.example.com"}},
		{ID: "stale", Secret: "stale-secret", Scopes: []string{"read"}, Audience: []string{resource}, Lifetime: -5 * time.Minute},
	} {
		p.AddClient(c)
	}
	return p
}

type fixture struct {
	v   *Verifier
	clk *clock
	log *syncBuffer
}

// verifier starts a verifier of the issuers and waits until every one is
// ready, unless wait is false.
func verifier(t *testing.T, wait bool, issuers ...string) fixture {
	t.Helper()
	f := fixture{clk: newClock(), log: &syncBuffer{}}
	v, err := NewVerifier(Config{Issuers: issuers, Audiences: []string{resource, resource + "/mcp"}, Now: f.clk.Now,
		Log: slog.New(slog.NewTextHandler(f.log, nil)), RetryMin: 20 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	v.Start(context.Background())
	t.Cleanup(v.Stop)
	f.v = v
	if wait {
		for _, is := range v.Issuers() {
			select {
			case <-is.Ready():
			case <-time.After(10 * time.Second):
				t.Fatalf("issuer %s not ready: %v\n%s", is.URL, is.err(), f.log)
			}
		}
	}
	return f
}

func mustVerify(t *testing.T, v *Verifier, tok string) Token {
	t.Helper()
	got, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("a good token was refused: %v", err)
	}
	return got
}

func mustRefuse(t *testing.T, v *Verifier, tok, want string) {
	t.Helper()
	_, err := v.Verify(context.Background(), tok)
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Reason, want) {
		t.Fatalf("refusal %v, want one saying %q", err, want)
	}
}

// TestVerifyProviderTokens: client credentials tokens of a real
// provider, signed with each accepted algorithm, found through either
// discovery document, verify; two tokens of one client are one identity.
func TestVerifyProviderTokens(t *testing.T) {
	for _, tc := range []struct {
		alg  jose.SignatureAlgorithm
		meta oidctest.Metadata
		path string
	}{
		{jose.RS256, oidctest.MetadataOIDC, ""},
		{jose.PS256, oidctest.MetadataRFC8414, "/realms/kfa"},
		{jose.ES256, oidctest.MetadataBoth, "/tenant"},
		{jose.EdDSA, oidctest.MetadataOIDC, ""},
	} {
		t.Run(string(tc.alg), func(t *testing.T) {
			p := provider(t, oidctest.Options{Alg: tc.alg, Metadata: tc.meta, Path: tc.path})
			f := verifier(t, true, p.Issuer)
			m := f.v.Issuers()[0].Metadata()
			if m.TokenEndpoint != p.TokenURL() || !m.SupportsGrant("client_credentials") {
				t.Fatalf("metadata %+v", m)
			}
			a := mustVerify(t, f.v, p.Token(t, "svc", "read", "post"))
			b := mustVerify(t, f.v, p.Token(t, "svc", "read", "post"))
			if a.Issuer != p.Issuer || a.Subject != "svc" || a.Name != "build-bot" || strings.Join(a.Scopes, ",") != "read,post" ||
				b.Subject != a.Subject || b.Issuer != a.Issuer {
				t.Fatalf("tokens %+v and %+v", a, b)
			}
			r := mustVerify(t, f.v, p.Token(t, "reader", "read", "post"))
			if strings.Join(r.Scopes, ",") != "read" || r.Name != "reader" {
				t.Fatalf("the reader's token %+v", r)
			}
		})
	}
}

// TestVerifyRefusals: each token kfa must refuse is refused, with a
// reason that says what to do.
func TestVerifyRefusals(t *testing.T) {
	p := provider(t, oidctest.Options{})
	other := provider(t, oidctest.Options{})
	f := verifier(t, true, p.Issuer)
	good := p.Token(t, "svc", "read", "post")
	for _, tc := range []struct {
		name  string
		token string
		want  string
	}{
		{"expired", p.Token(t, "stale", "read"), "the token expired at"},
		{"wrong audience", p.Token(t, "elsewhere", "read"), `audience (aud ["https://other.example.com"]) is not this server`},
		{"wrong issuer", other.Token(t, "svc", "read"), "issuer \"" + other.Issuer + "\" is not configured on this server; it accepts tokens of \"" + p.Issuer + "\""},
		{"alg none", p.Forge(t, good, "none", nil), `the token is not signed (alg "none")`},
		{"HS256 with the public key as the secret", p.Forge(t, good, "HS256", nil), `signed with a shared secret (alg "HS256")`},
		{"claims changed under the provider's signature", resign(t, good), "signature does not verify"},
		{"no scope of kfa's", p.Token(t, "svc", "openid"), `grants neither the "read" nor the "post" scope`},
		{"garbage", "abc.def.ghi", "header does not decode"},
		{"too long", strings.Repeat("a", MaxTokenBytes+1), "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) { mustRefuse(t, f.v, tc.token, tc.want) })
	}
}

// resign swaps a token's claims for others (a subject of the attacker's
// choosing) and keeps the provider's signature.
func resign(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	forged := strings.Split((&oidctest.Provider{}).Forge(t, tok, "none", func(c map[string]any) { c["sub"] = "admin" }), ".")
	return parts[0] + "." + forged[1] + "." + parts[2]
}

// TestKeyRotation: a token signed with a key kfa has not seen makes it
// fetch the key set again, so a rotation at the provider is followed
// without a restart; another unknown key within the gap costs the
// provider nothing, and is refused until the gap has passed.
func TestKeyRotation(t *testing.T) {
	p := provider(t, oidctest.Options{})
	f := verifier(t, true, p.Issuer)
	mustVerify(t, f.v, p.Token(t, "svc", "read"))
	fetches := p.JWKSFetches()

	p.RotateKey(t)
	mustVerify(t, f.v, p.Token(t, "svc", "read"))
	if n := p.JWKSFetches() - fetches; n != 1 {
		t.Fatalf("the rotation cost %d key set fetches, want 1", n)
	}
	mustVerify(t, f.v, p.Token(t, "svc", "read"))

	p.RotateKey(t)
	third := p.Token(t, "svc", "read")
	mustRefuse(t, f.v, third, "kfa fetches them at most once every 1m0s")
	mustRefuse(t, f.v, third, "is not among the keys of issuer "+p.Issuer)
	if n := p.JWKSFetches() - fetches; n != 1 {
		t.Fatalf("refused unknown keys cost %d fetches in all, want 1", n)
	}
	f.clk.Advance(DefaultRefetchGap)
	mustVerify(t, f.v, third)
	if n := p.JWKSFetches() - fetches; n != 2 {
		t.Fatalf("after the gap: %d fetches, want 2", n)
	}
	// A made-up key id: one fetch per gap, however many tokens.
	f.clk.Advance(DefaultRefetchGap)
	madeUp := strings.Replace(third, strings.Split(third, ".")[0], encodeHeader(t, `{"alg":"RS256","kid":"made-up","typ":"at+jwt"}`), 1)
	for range 5 {
		mustRefuse(t, f.v, madeUp, `key id "made-up" is not among the keys`)
	}
	if n := p.JWKSFetches() - fetches; n != 3 {
		t.Fatalf("five made-up key ids cost %d fetches in all, want 3", n)
	}
}

func encodeHeader(t *testing.T, h string) string {
	t.Helper()
	return base64.RawURLEncoding.EncodeToString([]byte(h))
}

// TestProviderUnreachableAfterStart: tokens signed with keys kfa holds
// keep verifying while the provider is down; a token with a new key is
// refused, saying the keys could not be fetched.
func TestProviderUnreachableAfterStart(t *testing.T) {
	p := provider(t, oidctest.Options{})
	f := verifier(t, true, p.Issuer)
	before := p.Token(t, "svc", "read", "post")
	p.RotateKey(t)
	after := p.Token(t, "svc", "read", "post")
	p.SetReachable(false)
	mustVerify(t, f.v, before)
	mustRefuse(t, f.v, after, "is not among the keys of issuer "+p.Issuer+", and fetching them again failed")
	mustVerify(t, f.v, before)
	p.SetReachable(true)
	f.clk.Advance(DefaultRefetchGap)
	mustVerify(t, f.v, after)
}

// TestIssuerUnreachableAtStart: an issuer that does not answer when kfa
// starts is logged, its tokens are refused saying so, and it is tried
// again until it answers; then its tokens verify.
func TestIssuerUnreachableAtStart(t *testing.T) {
	p := provider(t, oidctest.Options{})
	tok := p.Token(t, "svc", "read")
	p.SetReachable(false)
	f := verifier(t, false, p.Issuer)
	mustRefuse(t, f.v, tok, "kfa has not reached issuer "+p.Issuer+" yet")
	is := f.v.Issuers()[0]
	changed := f.v.Changed()
	// Two failed attempts logged, then the provider comes back.
	for deadline := time.Now().Add(time.Minute); strings.Count(f.log.String(), "cannot use issuer") < 2; { // a guard, not a measure
		if time.Now().After(deadline) {
			t.Fatalf("no retries logged:\n%s", f.log)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if out := f.log.String(); !strings.Contains(out, "kfa tokens keep working") || !strings.Contains(out, "issuer="+p.Issuer) {
		t.Fatalf("the log does not say what happens:\n%s", out)
	}
	p.SetReachable(true)
	select {
	case <-is.Ready():
	case <-time.After(time.Minute): // a guard, not a measure
		t.Fatalf("the issuer was not tried again:\n%s", f.log)
	}
	select {
	case <-changed:
	default:
		t.Fatal("Changed was not closed when the issuer was discovered")
	}
	mustVerify(t, f.v, tok)
}

// TestIssuerMetadataMismatch: metadata that names another issuer (a
// trailing slash too many in the configuration) is not used, and the log
// says how to fix it.
func TestIssuerMetadataMismatch(t *testing.T) {
	p := provider(t, oidctest.Options{})
	f := verifier(t, false, p.Issuer+"/")
	tok := p.Token(t, "svc", "read")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(f.log.String(), "configure --oauth-issuer exactly as the provider names itself"); {
		if time.Now().After(deadline) {
			t.Fatalf("no clear log:\n%s", f.log)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustRefuse(t, f.v, tok, "is not configured on this server")
}

func TestNewVerifierRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no issuer", Config{Audiences: []string{resource}}, "no issuer"},
		{"no audience", Config{Issuers: []string{"https://idp.example.com"}}, "no audience"},
		{"plain http", Config{Issuers: []string{"http://idp.example.com"}, Audiences: []string{resource}}, "plain http on a host that is not loopback"},
		{"twice", Config{Issuers: []string{"https://idp.example.com", "https://idp.example.com"}, Audiences: []string{resource}}, "named twice"},
	} {
		if _, err := NewVerifier(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
