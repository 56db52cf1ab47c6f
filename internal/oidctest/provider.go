package oidctest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Metadata says which discovery documents the provider serves.
type Metadata int

// The discovery documents.
const (
	// MetadataOIDC serves OpenID discovery only (the OP's own).
	MetadataOIDC Metadata = iota
	// MetadataRFC8414 serves RFC 8414 authorization server metadata only.
	MetadataRFC8414
	// MetadataBoth serves both.
	MetadataBoth
)

// Options shape a provider.
type Options struct {
	// Alg is the signing algorithm of its keys; default RS256.
	Alg jose.SignatureAlgorithm
	// Path is the issuer's path (e.g. "/realms/kfa"); default none.
	Path     string
	Metadata Metadata
	// PlainJWT issues access tokens as zitadel's OP signs them, typed
	// "JWT" like its ID tokens (as Entra ID and ZITADEL do), instead of
	// "at+jwt" (RFC 9068), which kfa requires unless told otherwise.
	PlainJWT bool
}

// Person is someone who can sign in at the provider's login page.
type Person struct {
	Subject  string
	Username string // what they type on the login page; their preferred_username
	Name     string
	// Scopes are the scopes the provider grants them, beyond openid,
	// profile and email: a sign-in asking for more gets these only. nil
	// grants whatever their client may have.
	Scopes []string
	// Claims are added to their ID tokens (Entra, for one, puts the app
	// roles a person holds in "roles").
	Claims map[string]any
}

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:PORT[/path]).
	Issuer string
	opts   Options
	st     *storage
	op     *op.Provider
	srv    *httptest.Server
	// unreachable makes every request fail as if nothing listened.
	unreachable atomic.Bool
	requests    atomic.Int64
	jwksFetches atomic.Int64
}

// Start runs a provider on 127.0.0.1 until the test ends.
func Start(t testing.TB, opts Options) *Provider {
	t.Helper()
	if opts.Alg == "" {
		opts.Alg = jose.RS256
	}
	k, err := newKey(opts.Alg)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{opts: opts, st: newStorage(k)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Issuer = "http://" + ln.Addr().String() + opts.Path
	p.op, err = op.NewProvider(&op.Config{
		CryptoKey:                sha256.Sum256([]byte("oidctest " + p.Issuer)),
		DefaultLogoutRedirectURI: "/logged-out",
		CodeMethodS256:           true,
		AuthMethodPost:           true,
	}, p.st, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	p.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: p.handler(), ReadHeaderTimeout: 10 * time.Second}}
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// handler routes the provider: its login page and logged-out page at the
// root, the OP under the issuer's path, and the discovery documents the
// options ask for.
func (p *Provider) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/login", p.login)
	mux.HandleFunc("/logged-out", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("<!doctype html><title>Signed out</title><p id=signed-out>Signed out of the provider.</p>"))
	})
	var provider http.Handler = p.op
	if p.opts.Path != "" {
		provider = http.StripPrefix(p.opts.Path, p.op)
	}
	oidcPath := p.opts.Path + "/.well-known/openid-configuration"
	rfcPath := "/.well-known/oauth-authorization-server" + p.opts.Path
	mux.HandleFunc(rfcPath, func(w http.ResponseWriter, r *http.Request) {
		if p.opts.Metadata == MetadataOIDC {
			http.NotFound(w, r)
			return
		}
		// The same document the OP serves for OpenID discovery.
		r2 := r.Clone(r.Context())
		r2.URL.Path = oidcPath
		provider.ServeHTTP(w, r2)
	})
	mux.Handle("/", provider)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.unreachable.Load() {
			// Close the connection unanswered, as a host that is down
			// (or a port nothing listens on) leaves the client with an
			// error and no response.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					_ = c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		p.requests.Add(1)
		if r.URL.Path == p.opts.Path+"/keys" {
			p.jwksFetches.Add(1)
		}
		if r.URL.Path == oidcPath && p.opts.Metadata == MetadataRFC8414 {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == p.opts.Path+tokenPath && !p.opts.PlainJWT {
			p.typeTokens(w, r, mux)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<title>Sign in to the test provider</title>
<form method="post" action="/login">
<input type="hidden" name="id" value="{{.}}">
<label>Username <input id="username" name="username" autocomplete="off"></label>
<button id="signin" type="submit">Sign in</button>
</form>`))

// login is the provider's login page: a person types their username.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = loginPage.Execute(w, r.URL.Query().Get("id"))
	case http.MethodPost:
		id := r.PostFormValue("id")
		if err := p.st.login(id, r.PostFormValue("username")); err != nil {
			http.Error(w, "unknown person or request", http.StatusForbidden)
			return
		}
		ctx := op.ContextWithIssuer(r.Context(), p.Issuer)
		http.Redirect(w, r, op.AuthCallbackURL(p.op)(ctx, id), http.StatusFound)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// AddClient registers c.
func (p *Provider) AddClient(c Client) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.clients[c.ID] = &client{cfg: c}
}

// AddPerson lets person sign in.
func (p *Provider) AddPerson(person Person) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.people[person.Username] = person
}

// TokenURL is the provider's token endpoint.
func (p *Provider) TokenURL() string { return p.Issuer + "/oauth/token" }

// JWKSURL is the provider's key set.
func (p *Provider) JWKSURL() string { return p.Issuer + "/keys" }

// Token gets an access token for client id with the client credentials
// grant, asking for scopes, through the token endpoint.
func (p *Provider) Token(t testing.TB, id string, scopes ...string) string {
	t.Helper()
	tok, err := p.TokenErr(context.Background(), id, scopes...)
	if err != nil {
		t.Fatalf("client credentials token for %s: %v", id, err)
	}
	return tok
}

// TokenErr is Token without a test.
func (p *Provider) TokenErr(ctx context.Context, id string, scopes ...string) (string, error) {
	p.st.mu.Lock()
	c, ok := p.st.clients[id]
	p.st.mu.Unlock()
	if !ok {
		return "", errors.New("oidctest: no client " + id)
	}
	// The request by hand rather than with x/oauth2: the OP writes the
	// expires_in of an expired token as a huge unsigned number, which
	// x/oauth2 will not parse, and the tests need such tokens.
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {strings.Join(scopes, " ")}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.TokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(c.cfg.Secret))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("token endpoint: %s: %w", res.Status, err)
	}
	if out.AccessToken == "" {
		return "", fmt.Errorf("token endpoint: %s: %s %s", res.Status, out.Error, out.Description)
	}
	return out.AccessToken, nil
}

// RotateKey makes a new signing key the current one and returns its key
// id. The older keys stay in the JWKS, as providers keep them while
// tokens they signed live.
func (p *Provider) RotateKey(t testing.TB) string {
	t.Helper()
	k, err := newKey(p.opts.Alg)
	if err != nil {
		t.Fatal(err)
	}
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.keys = append(p.st.keys, k)
	return k.id
}

// KeyID is the current signing key's id.
func (p *Provider) KeyID() string {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	return p.st.keys[len(p.st.keys)-1].id
}

// SetReachable makes the provider answer (true) or drop every connection
// unanswered (false), as if it were down.
func (p *Provider) SetReachable(up bool) { p.unreachable.Store(!up) }

// Requests counts the requests the provider answered.
func (p *Provider) Requests() int64 { return p.requests.Load() }

// JWKSFetches counts the requests for its key set.
func (p *Provider) JWKSFetches() int64 { return p.jwksFetches.Load() }

// IssuedTokens counts the access tokens it issued.
func (p *Provider) IssuedTokens() int {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	return len(p.st.issued)
}

// Host is the provider's host:port.
func (p *Provider) Host() string {
	return strings.TrimPrefix(strings.TrimSuffix(p.Issuer, p.opts.Path), "http://")
}
