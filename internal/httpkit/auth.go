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

// APIKeyHeader is the second way to send an agent token, for clients whose
// SDK sets an API key header more easily than a bearer.
const APIKeyHeader = "X-API-Key"

// errConflict is a request with both credential headers, naming
// different tokens: refused as malformed, not as a failed guess.
var errConflict = errors.New("both Authorization: Bearer and X-API-Key are set, to different tokens; send one of the two (or the same token in both)")

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

// apiKey extracts the token of an "X-API-Key: <token>" header.
func apiKey(r *http.Request) (token string, present bool, err error) {
	vals := r.Header.Values(APIKeyHeader)
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", true, errors.New("more than one X-API-Key header")
	}
	tok := strings.TrimSpace(vals[0])
	if tok == "" {
		return "", true, errors.New("empty X-API-Key")
	}
	return tok, true, nil
}

// credential extracts the agent token from either header. Both may be
// sent only with the same token: a client that sends two different ones
// has a bug worth telling it about.
func credential(r *http.Request) (token string, present bool, err error) {
	tok, present, err := bearer(r)
	key, keyPresent, keyErr := apiKey(r)
	switch {
	case !keyPresent:
		return tok, present, err
	case !present:
		return key, true, keyErr
	case err != nil:
		return "", true, err
	case keyErr != nil:
		return "", true, keyErr
	case tok != key:
		return "", true, errConflict
	}
	return tok, true, nil
}

// Auth resolves agent tokens (Authorization: Bearer or X-API-Key) to
// callers, for every binding.
type Auth struct {
	Agents *agents.Service
	// Failures limits failed authentications per client address; nil means
	// no limit.
	Failures *ratelimit.Limiter
	// Requests limits authenticated requests per agent; nil means no
	// limit. A request that counts against a narrower limit too (an ask, a
	// reply, a search) reports that one in its RateLimit headers.
	Requests *ratelimit.Limiter
}

// QuotaRequest names the per-agent request rate in a ratelimit.Quota.
const QuotaRequest = "request"

// Caller resolves who is calling. With required, a request without a
// credential is refused; without it, such a request is anonymous. A
// credential that is present but bad is always refused: a client that sends
// one wants to know it does not work.
func (au Auth) Caller(r *http.Request, required bool) (service.Caller, error) {
	c := service.Caller{Addr: ClientAddr(r)}
	tok, present, err := credential(r)
	if !present {
		if required {
			return c, a2a.MissingCredential("missing bearer token: send Authorization: Bearer kfa_... (or X-API-Key: kfa_...)")
		}
		return c, nil
	}
	if errors.Is(err, errConflict) {
		return c, a2a.Errorf(a2a.InvalidRequest, "%s", err.Error())
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
			return c, au.countRequest(r, a.ID)
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

// countRequest spends one of the agent's requests, and notes where it
// stands for the RateLimit headers.
func (au Auth) countRequest(r *http.Request, agentID string) error {
	l := au.Requests
	if l == nil {
		return nil
	}
	key := "agent:" + agentID
	wait, ok := l.Allow(key)
	if q, on := l.Quota(QuotaRequest, key); on {
		ratelimit.Note(r.Context(), q)
	}
	if !ok {
		return &a2a.Error{Kind: a2a.RateLimited, RetryAfter: wait,
			Message: fmt.Sprintf("too many requests: the limit is %s per agent", l)}
	}
	return nil
}
