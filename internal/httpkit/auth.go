package httpkit

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/service"
)

// bearer extracts the token of an "Authorization: Bearer <token>" header.
// present is false when there is no Authorization header at all.
func bearer(r *http.Request) (token string, present bool, err error) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", true, errors.New("more than one Authorization header")
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true, errors.New("the Authorization header must use the Bearer scheme")
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", true, errors.New("empty bearer token")
	}
	return tok, true, nil
}

// Auth resolves bearer tokens to callers, for every binding.
type Auth struct {
	Agents *agents.Service
	// Failures limits failed authentications per client address; nil means
	// no limit.
	Failures *ratelimit.Limiter
}

// Caller resolves who is calling. With required, a request without a
// credential is refused; without it, such a request is anonymous. A
// credential that is present but bad is always refused: a client that sends
// one wants to know it does not work.
func (au Auth) Caller(r *http.Request, required bool) (service.Caller, error) {
	c := service.Caller{Addr: ClientAddr(r)}
	tok, present, err := bearer(r)
	if !present {
		if required {
			return c, a2a.Errorf(a2a.Unauthenticated, "missing bearer token: send Authorization: Bearer kfa_...")
		}
		return c, nil
	}
	// An address out of failed attempts is refused before its credential is
	// even looked at: a guess made while limited learns nothing.
	if l := au.Failures; l != nil {
		if wait, blocked := l.Blocked(c.Addr); blocked {
			return c, &a2a.Error{Kind: a2a.RateLimited, RetryAfter: wait,
				Message: "too many failed authentications from this address; try again later"}
		}
	}
	if err == nil {
		var a agents.Agent
		if a, err = au.Agents.Authenticate(r.Context(), tok); err == nil {
			c.Agent = &a
			noteAgent(r.Context(), a.ID)
			return c, nil
		}
		if !errors.Is(err, agents.ErrInvalidToken) {
			return c, fmt.Errorf("authenticate: %w", err)
		}
	}
	// A failed credential costs the address one attempt of its budget.
	if l := au.Failures; l != nil {
		l.Allow(c.Addr)
	}
	msg := "invalid, expired or revoked bearer token"
	if !errors.Is(err, agents.ErrInvalidToken) {
		msg = err.Error()
	}
	return c, a2a.Errorf(a2a.Unauthenticated, "%s", msg)
}
