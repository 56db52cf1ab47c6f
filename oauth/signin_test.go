package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/oidctest"
)

func TestSealFlow(t *testing.T) {
	key := []byte("k1")
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	f := NewFlow("https://idp.example.com", "/discussions/x", now)
	sealed := SealFlow(key, f)
	got, err := OpenFlow(key, sealed, f.State, now.Add(FlowTTL-time.Second))
	if err != nil || got != f {
		t.Fatalf("open: %+v %v, want %+v", got, err, f)
	}
	other := NewFlow("https://idp.example.com", "/", now)
	for _, tc := range []struct {
		name   string
		key    []byte
		sealed string
		state  string
		at     time.Time
	}{
		{"another key", []byte("k2"), sealed, f.State, now},
		{"another state", key, sealed, other.State, now},
		{"no state", key, sealed, "", now},
		{"expired", key, sealed, f.State, now.Add(FlowTTL)},
		{"payload swapped", key, strings.Split(SealFlow(key, other), ".")[0] + "." + strings.Split(sealed, ".")[1], f.State, now},
		{"not sealed", key, "garbage", f.State, now},
		{"empty", key, "", f.State, now},
	} {
		if _, err := OpenFlow(tc.key, tc.sealed, tc.state, tc.at); !errors.Is(err, ErrFlow) {
			t.Errorf("%s: %v, want ErrFlow", tc.name, err)
		}
	}
	if f.Verifier == other.Verifier || f.Nonce == other.Nonce || f.State == other.State || len(f.Verifier) < 43 {
		t.Fatalf("flows share secrets: %+v %+v", f, other)
	}
}

// signInAt runs a person's browser through the provider: from the
// authorization URL to the login page, signing in as username, and back
// to the redirect URL; it returns the callback's query.
func signInAt(t *testing.T, authURL, redirect, username string) url.Values {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	var callback *url.URL
	c := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirect) {
			callback = r.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	res, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	login := res.Request.URL
	if login.Path != "/login" {
		t.Fatalf("the provider sent the browser to %s, not its login page (%s)", login, res.Status)
	}
	res, err = c.PostForm(login.Scheme+"://"+login.Host+"/login", url.Values{"id": {login.Query().Get("id")}, "username": {username}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if callback == nil {
		t.Fatalf("the provider did not send the browser back: %s at %s", res.Status, res.Request.URL)
	}
	return callback.Query()
}

// TestSignIn: a person signs in at a real provider with the authorization
// code flow (PKCE, state, nonce); the ID token names them; a code is
// redeemed once, only with its flow's verifier and nonce.
func TestSignIn(t *testing.T) {
	p := provider(t, oidctest.Options{Path: "/realms/kfa"})
	const redirect = "https://kfa.example.com/login/callback"
	p.AddClient(oidctest.Client{ID: "kfa-web", Secret: "web-secret", RedirectURIs: []string{redirect},
		PostLogoutRedirectURIs: []string{"https://kfa.example.com/"}})
	p.AddPerson(oidctest.Person{Subject: "u-alice", Username: "alice", Name: "Alice A."})
	f := verifier(t, true, p.Issuer)
	web := WebClient{ID: "kfa-web", Secret: "web-secret", RedirectURL: redirect}
	is := f.v.Issuer(p.Issuer)
	ctx := context.Background()

	start := func() (Flow, url.Values) {
		flow := NewFlow(p.Issuer, "/discussions", f.clk.Now())
		u, err := is.AuthCodeURL(web, flow)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := url.Parse(u)
		for k, want := range map[string]string{"state": flow.State, "nonce": flow.Nonce, "code_challenge_method": "S256",
			"client_id": "kfa-web", "redirect_uri": redirect, "response_type": "code"} {
			if got := q.Query().Get(k); got != want {
				t.Fatalf("the authorization URL has %s=%q, want %q: %s", k, got, want, u)
			}
		}
		return flow, signInAt(t, u, redirect, "alice")
	}

	flow, cb := start()
	if cb.Get("state") != flow.State || cb.Get("code") == "" {
		t.Fatalf("callback %v", cb)
	}
	person, err := f.v.Exchange(ctx, web, flow, cb.Get("code"))
	if err != nil || person.Issuer != p.Issuer || person.Subject != "u-alice" || person.Name != "alice" {
		t.Fatalf("exchange: %+v %v", person, err)
	}
	if _, err := f.v.Exchange(ctx, web, flow, cb.Get("code")); err == nil {
		t.Fatal("a code was redeemed twice")
	}

	flow, cb = start()
	wrong := flow
	wrong.Verifier = NewFlow(p.Issuer, "/", f.clk.Now()).Verifier
	if _, err := f.v.Exchange(ctx, web, wrong, cb.Get("code")); err == nil || !strings.Contains(err.Error(), "did not accept the sign-in") {
		t.Fatalf("another PKCE verifier: %v", err)
	}

	flow, cb = start()
	wrong = flow
	wrong.Nonce = "another"
	if _, err := f.v.Exchange(ctx, web, wrong, cb.Get("code")); err == nil || !strings.Contains(err.Error(), "nonce differs") {
		t.Fatalf("another nonce: %v", err)
	}

	flow, cb = start()
	if _, err := f.v.Exchange(ctx, WebClient{ID: "kfa-web", Secret: "wrong", RedirectURL: redirect}, flow, cb.Get("code")); err == nil {
		t.Fatal("a wrong client secret redeemed a code")
	}

	logout := is.LogoutURL("kfa-web", "https://kfa.example.com/")
	u, _ := url.Parse(logout)
	if !strings.HasPrefix(logout, p.Issuer+"/") || u.Query().Get("client_id") != "kfa-web" ||
		u.Query().Get("post_logout_redirect_uri") != "https://kfa.example.com/" {
		t.Fatalf("logout URL %s", logout)
	}
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(logout)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode/100 != 3 || loc != "https://kfa.example.com/" {
		t.Fatalf("the provider's logout answered %s, to %q", res.Status, loc)
	}
}

// TestSignInGrant: a sign-in asks for kfa's scopes on kfa's resource
// (RFC 8707), and reads what the provider granted: the scopes of the
// access token it returned when that is an access token for kfa, else
// kfa's scopes among those its token endpoint said it granted; a
// provider of AgentScopes is asked for none and grants nothing known.
func TestSignInGrant(t *testing.T) {
	p := provider(t, oidctest.Options{})
	const redirect = "https://kfa.example.com/login/callback"
	p.AddClient(oidctest.Client{ID: "kfa-web", Secret: "w", Scopes: []string{"read", "post"}, Audience: []string{resource},
		RedirectURIs: []string{redirect}})
	p.AddClient(oidctest.Client{ID: "other-web", Secret: "o", Scopes: []string{"read", "post"}, RedirectURIs: []string{redirect}})
	p.AddPerson(oidctest.Person{Subject: "u-rita", Username: "rita", Scopes: []string{"read"}})
	p.AddPerson(oidctest.Person{Subject: "u-pete", Username: "pete", Scopes: []string{"read", "post"}})
	f := verifier(t, true, p.Issuer)
	is := f.v.Issuer(p.Issuer)
	signIn := func(web WebClient, who string) (Person, url.Values) {
		t.Helper()
		flow := NewFlow(p.Issuer, "/", f.clk.Now())
		u, err := is.AuthCodeURL(web, flow)
		if err != nil {
			t.Fatal(err)
		}
		asked, _ := url.Parse(u)
		person, err := f.v.Exchange(context.Background(), web, flow, signInAt(t, u, redirect, who).Get("code"))
		if err != nil {
			t.Fatal(err)
		}
		return person, asked.Query()
	}
	web := WebClient{ID: "kfa-web", Secret: "w", RedirectURL: redirect, Resource: resource}
	for _, tc := range []struct {
		name  string
		web   WebClient
		who   string
		want  string
		agent bool
	}{
		{"a read-only person, from the access token", web, "rita", "read", false},
		{"a person granted post, from the access token", web, "pete", "read,post", false},
		{"an access token for another resource: the token endpoint's answer", WebClient{ID: "other-web", Secret: "o",
			RedirectURL: redirect, Resource: resource}, "rita", "read", false},
		{"a provider that grants nothing of kfa's", WebClient{ID: "kfa-web", Secret: "w", RedirectURL: redirect, Resource: resource,
			AgentScopes: []string{p.Issuer}}, "pete", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			person, asked := signIn(tc.web, tc.who)
			if got := strings.Join(person.Scopes, ","); got != tc.want || person.AgentScopes != tc.agent {
				t.Fatalf("granted %q (agent scopes %v), want %q (%v)", got, person.AgentScopes, tc.want, tc.agent)
			}
			scope, res := "openid profile read post", resource
			if tc.agent {
				scope, res = "openid profile", ""
			}
			if asked.Get("scope") != scope || asked.Get("resource") != res || asked.Get("audience") != res {
				t.Fatalf("asked for scope %q on resource %q", asked.Get("scope"), asked.Get("resource"))
			}
		})
	}
}
