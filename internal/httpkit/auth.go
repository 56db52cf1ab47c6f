package httpkit

import (
	"errors"
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
// present is false when there is no Authorization header at all.
func bearer(h http.Header) (token string, present bool, err error) {
	vals := h.Values("Authorization")
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
		return "", true, errors.New("empty X-API-Key")
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
