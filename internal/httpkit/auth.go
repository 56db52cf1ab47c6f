package httpkit

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kfa-project/kfa/a2a"
)

// APIKeyHeader is the second way to send an agent token, for clients whose
// SDK sets an API key header more easily than a bearer.
const APIKeyHeader = "X-API-Key"

// errConflict is a request with both credential headers, naming
// different tokens: refused as malformed (an *a2a.Error), not as a failed
// guess.
var errConflict = a2a.Errorf(a2a.InvalidRequest, "%s",
	"both Authorization: Bearer and X-API-Key are set, to different tokens; send one of the two (or the same token in both)")

// bearer extracts the token of an "Authorization: Bearer <token>" header.
// present is false when there is no Authorization header at all. A
// header that holds no token says so: a server trims "Bearer " to
// "Bearer", which is an empty token, not another scheme.
func bearer(h http.Header) (token string, present bool, err error) {
	vals := h.Values("Authorization")
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", true, errors.New("more than one Authorization header")
	}
	v := strings.TrimSpace(vals[0])
	if v == "" {
		return "", true, errors.New("the Authorization header is empty: send Authorization: Bearer TOKEN")
	}
	scheme, tok := v, ""
	if i := strings.IndexAny(v, " \t"); i >= 0 {
		scheme, tok = v[:i], strings.TrimSpace(v[i+1:])
	}
	switch {
	case !strings.EqualFold(scheme, "Bearer") && schemeName(scheme) && tok != "":
		return "", true, fmt.Errorf("the Authorization header must use the Bearer scheme, not %q: Authorization: Bearer TOKEN", scheme)
	case !strings.EqualFold(scheme, "Bearer"):
		// Not echoed: without a scheme, what came is likely the token.
		return "", true, errors.New("the Authorization header must use the Bearer scheme: Authorization: Bearer TOKEN")
	case tok == "":
		return "", true, errors.New("the Authorization header's bearer token is empty: send Authorization: Bearer TOKEN, the token after the space")
	}
	return tok, true, nil
}

// schemeName reports whether s looks like an authentication scheme's
// name (Basic, Digest, ...), which a refusal may repeat.
func schemeName(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// apiKey extracts the token of an "X-API-Key: <token>" header.
func apiKey(h http.Header) (token string, present bool, err error) {
	vals := h.Values(APIKeyHeader)
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", true, errors.New("more than one X-API-Key header")
	}
	tok := strings.TrimSpace(vals[0])
	if tok == "" {
		return "", true, errors.New("the X-API-Key header's token is empty: send X-API-Key: TOKEN")
	}
	return tok, true, nil
}

// Credential extracts the agent token from either header (Authorization:
// Bearer or X-API-Key); present is false when neither is sent. Both may
// be sent only with the same token: a client that sends two different
// ones has a bug worth telling it about (an *a2a.Error); any other err
// says why the headers could not be read, which counts as a failed
// authentication. The service decides who the token is
// (service.Authenticate): this reads headers only.
func Credential(r *http.Request) (token string, present bool, err error) {
	return HeaderCredential(r.Header)
}

// HeaderCredential is Credential of the headers h: the same two headers
// read the same way, for a transport whose headers are not an
// *http.Request's (gRPC metadata, put in an http.Header).
func HeaderCredential(h http.Header) (token string, present bool, err error) {
	tok, present, err := bearer(h)
	key, keyPresent, keyErr := apiKey(h)
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
