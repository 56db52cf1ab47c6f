package oidctest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage is the OP's in-memory state: clients, people, signing keys,
// pending authorization requests and their codes.
type storage struct {
	mu       sync.Mutex
	clients  map[string]*client
	people   map[string]Person // by username
	keys     []*signingKey     // the current one last; all are published
	requests map[string]*authRequest
	codes    map[string]string // code -> request id
	issued   []string          // access token ids, for the tests' counts
}

func newStorage(k *signingKey) *storage {
	return &storage{clients: map[string]*client{}, people: map[string]Person{}, keys: []*signingKey{k},
		requests: map[string]*authRequest{}, codes: map[string]string{}}
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errNotFound is what the OP takes for an unknown client or request.
var errNotFound = errors.New("not found")

// authRequest is a pending authorization code request.
type authRequest struct {
	id          string
	clientID    string
	audience    []string // the client's id, then its Audience
	redirectURI string
	state       string
	nonce       string
	scopes      []string
	challenge   *oidc.CodeChallenge
	responseTyp oidc.ResponseType
	subject     string
	authTime    time.Time
	done        bool
}

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string                 { return a.audience }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseTyp }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return "" }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.subject }
func (a *authRequest) Done() bool                            { return a.done }

// ccRequest is a client credentials token request: the client is the
// subject.
type ccRequest struct {
	client *client
	scopes []string
}

func (r *ccRequest) GetSubject() string    { return r.client.cfg.ID }
func (r *ccRequest) GetAudience() []string { return r.client.cfg.Audience }
func (r *ccRequest) GetScopes() []string   { return r.scopes }

func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &authRequest{id: newID(), clientID: req.ClientID, audience: []string{req.ClientID}, redirectURI: req.RedirectURI,
		state: req.State, nonce: req.Nonce, scopes: req.Scopes, responseTyp: req.ResponseType}
	if c, ok := s.clients[req.ClientID]; ok {
		for _, aud := range c.cfg.Audience {
			if !slices.Contains(a.audience, aud) {
				a.audience = append(a.audience, aud)
			}
		}
	}
	if req.CodeChallenge != "" {
		a.challenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod}
	}
	s.requests[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.requests[id]; ok {
		return a, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errNotFound
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// login marks request id signed in as the person with username.
func (s *storage) login(id, username string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.requests[id]
	p, known := s.people[username]
	if !ok || !known {
		return errNotFound
	}
	a.subject, a.authTime, a.done = p.Subject, time.Now().UTC(), true
	if p.Scopes != nil {
		// The person is granted what they hold, whatever was asked.
		a.scopes = slices.DeleteFunc(slices.Clone(a.scopes), func(sc string) bool {
			return sc != oidc.ScopeOpenID && sc != oidc.ScopeProfile && sc != oidc.ScopeEmail && !slices.Contains(p.Scopes, sc)
		})
	}
	return nil
}

// lifetimeOf is the access token lifetime of the request's client.
func (s *storage) lifetimeOf(r op.TokenRequest) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c *client
	switch r := r.(type) {
	case *ccRequest:
		c = r.client
	case *authRequest:
		c = s.clients[r.clientID]
	}
	if c == nil || c.cfg.Lifetime == 0 {
		return 5 * time.Minute
	}
	return c.cfg.Lifetime
}

func (s *storage) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	id := newID()
	s.mu.Lock()
	s.issued = append(s.issued, id)
	s.mu.Unlock()
	return id, time.Now().UTC().Add(s.lifetimeOf(r)), nil
}

func (s *storage) CreateAccessAndRefreshTokens(ctx context.Context, r op.TokenRequest, _ string) (string, string, time.Time, error) {
	id, exp, err := s.CreateAccessToken(ctx, r)
	return id, "", exp, err
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errors.New("refresh tokens are not issued here")
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error { return nil }

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1], nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var algs []jose.SignatureAlgorithm
	for _, k := range s.keys {
		if !slices.Contains(algs, k.alg) {
			algs = append(algs, k.alg)
		}
	}
	return algs, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, len(s.keys))
	for i, k := range s.keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[id]; ok && c.cfg.Secret == secret {
		return nil
	}
	return errors.New("wrong client id or secret")
}

func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest puts the person's names in the ID token.
func (s *storage) SetUserinfoFromRequest(_ context.Context, ui *oidc.UserInfo, r op.IDTokenRequest, _ []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.people {
		if p.Subject == r.GetSubject() {
			ui.Subject = p.Subject
			ui.PreferredUsername = p.Username
			ui.Name = p.Name
			for k, v := range p.Claims {
				ui.AppendClaims(k, v)
			}
		}
	}
	return nil
}

func (s *storage) SetUserinfoFromToken(_ context.Context, ui *oidc.UserInfo, _, subject, _ string) error {
	ui.Subject = subject
	return nil
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("introspection is not offered here")
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

// GetPrivateClaimsFromRequest writes the access token's scope (RFC 9068),
// the person's or client's name and the client's extra claims.
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, r op.TokenRequest, scopes []string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	claims := map[string]any{}
	var granted []string
	for _, sc := range scopes {
		if sc != oidc.ScopeOpenID {
			granted = append(granted, sc)
		}
	}
	if len(granted) > 0 {
		claims["scope"] = strings.Join(granted, " ")
	}
	switch r := r.(type) {
	case *ccRequest:
		if r.client.cfg.Username != "" {
			claims["preferred_username"] = r.client.cfg.Username
		}
		for k, v := range r.client.cfg.Claims {
			claims[k] = v
		}
	case *authRequest:
		for _, p := range s.people {
			if p.Subject == r.subject {
				claims["preferred_username"] = p.Username
			}
		}
	}
	return claims, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile clients are not offered here")
}

func (s *storage) ValidateJWTProfileScopes(_ context.Context, _ string, scopes []string) ([]string, error) {
	return scopes, nil
}

func (s *storage) Health(context.Context) error { return nil }

// ClientCredentials implements op.ClientCredentialsStorage.
func (s *storage) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || c.cfg.Secret != secret || !slices.Contains(c.GrantTypes(), oidc.GrantTypeClientCredentials) {
		return nil, errors.New("wrong client id or secret")
	}
	return c, nil
}

// ClientCredentialsTokenRequest implements op.ClientCredentialsStorage:
// the client gets the scopes it asks for among those it may have.
func (s *storage) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, errNotFound
	}
	var granted []string
	for _, sc := range scopes {
		if c.IsScopeAllowed(sc) {
			granted = append(granted, sc)
		}
	}
	return &ccRequest{client: c, scopes: granted}, nil
}

var (
	_ op.Storage                        = (*storage)(nil)
	_ op.ClientCredentialsStorage       = (*storage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest      = (*storage)(nil)
)
