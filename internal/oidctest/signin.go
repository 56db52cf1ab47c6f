package oidctest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// Tokens are what the token endpoint answers a sign-in with.
type Tokens struct {
	AccessToken string `json:"access_token"`
	IDToken     string `json:"id_token"`
	Scope       string `json:"scope"`
}

// SignIn runs the authorization code flow (with PKCE) of web client
// clientID for the person with username, asking for scopes, as a
// browser and the client would: the authorization request, the login
// page, the redirect with the code (which goes nowhere), and the code's
// exchange at the token endpoint. It answers the tokens issued.
func (p *Provider) SignIn(t testing.TB, clientID, username string, scopes ...string) Tokens {
	t.Helper()
	p.st.mu.Lock()
	c, ok := p.st.clients[clientID]
	p.st.mu.Unlock()
	if !ok || len(c.cfg.RedirectURIs) == 0 {
		t.Fatalf("oidctest: no web client %s", clientID)
	}
	cfg := oauth2.Config{ClientID: clientID, ClientSecret: c.cfg.Secret, RedirectURL: c.cfg.RedirectURIs[0],
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer + "/authorize", TokenURL: p.TokenURL(), AuthStyle: oauth2.AuthStyleInHeader},
		Scopes:   append([]string{"openid", "profile"}, scopes...)}
	verifier := oauth2.GenerateVerifier()
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	step := func(res *http.Response, err error) *url.URL {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc, err := res.Location()
		if err != nil {
			t.Fatalf("oidctest: sign-in: %s, no redirect: %v", res.Status, err)
		}
		return loc
	}
	login := step(browser.Get(cfg.AuthCodeURL("st", oauth2.SetAuthURLParam("nonce", "n"), oauth2.S256ChallengeOption(verifier))))
	back := step(browser.PostForm("http://"+p.Host()+"/login", url.Values{"id": {login.Query().Get("id")}, "username": {username}}))
	if !strings.HasPrefix(back.String(), p.Issuer) {
		t.Fatalf("oidctest: the login went to %s", back)
	}
	code := step(browser.Get(back.String())).Query().Get("code")
	if code == "" {
		t.Fatalf("oidctest: no code for %s", username)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {cfg.RedirectURL}, "code_verifier": {verifier}}
	req, err := http.NewRequest(http.MethodPost, p.TokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(c.cfg.Secret))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out Tokens
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.IDToken == "" {
		t.Fatalf("oidctest: %s: %v %+v", res.Status, err, out)
	}
	return out
}

// String names the tokens for a failure message.
func (tk Tokens) String() string { return fmt.Sprintf("scope %q", tk.Scope) }
