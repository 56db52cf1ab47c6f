package httpkit

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCredential(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bearer   []string
		key      []string
		token    string
		present  bool
		bad      bool
		conflict bool
	}{
		{name: "none"},
		{name: "bearer only", bearer: []string{"Bearer kfa_a"}, token: "kfa_a", present: true},
		{name: "key only", key: []string{" kfa_a "}, token: "kfa_a", present: true},
		{name: "both, same token", bearer: []string{"Bearer kfa_a"}, key: []string{"kfa_a"}, token: "kfa_a", present: true},
		{name: "both, different tokens", bearer: []string{"Bearer kfa_a"}, key: []string{"kfa_b"}, present: true, bad: true, conflict: true},
		{name: "empty key", key: []string{" "}, present: true, bad: true},
		{name: "two keys", key: []string{"kfa_a", "kfa_a"}, present: true, bad: true},
		{name: "bad bearer, good key", bearer: []string{"Basic x"}, key: []string{"kfa_a"}, present: true, bad: true},
		{name: "good bearer, empty key", bearer: []string{"Bearer kfa_a"}, key: []string{""}, present: true, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, v := range tc.bearer {
				r.Header.Add("Authorization", v)
			}
			for _, v := range tc.key {
				r.Header.Add(APIKeyHeader, v)
			}
			tok, present, err := Credential(r)
			if tok != tc.token || present != tc.present || (err != nil) != tc.bad || errors.Is(err, error(errConflict)) != tc.conflict {
				t.Fatalf("credential = %q, %v, %v", tok, present, err)
			}
		})
	}
}

// TestCredentialSaysWhy: a credential header that cannot be read says
// what is wrong with it: an empty token is an empty token, whatever the
// header (a server trims "Bearer " to "Bearer"), not a wrong scheme.
func TestCredentialSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name, header, value, want string
	}{
		{"Bearer and a space", "Authorization", "Bearer ", "the Authorization header's bearer token is empty"},
		{"Bearer, trimmed", "Authorization", "Bearer", "the Authorization header's bearer token is empty"},
		{"bearer and blanks", "Authorization", "bearer \t  ", "the Authorization header's bearer token is empty"},
		{"BEARER, trimmed", "Authorization", "BEARER", "the Authorization header's bearer token is empty"},
		{"an empty Authorization", "Authorization", "", "the Authorization header is empty"},
		{"blanks only", "Authorization", "   ", "the Authorization header is empty"},
		{"another scheme", "Authorization", "Basic YTpi", `the Authorization header must use the Bearer scheme, not "Basic"`},
		{"a token without a scheme", "Authorization", "kfa_abc", `the Authorization header must use the Bearer scheme: Authorization: Bearer TOKEN`},
		{"an empty X-API-Key", APIKeyHeader, "", "the X-API-Key header's token is empty"},
		{"a blank X-API-Key", APIKeyHeader, "  ", "the X-API-Key header's token is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set(tc.header, tc.value)
			_, present, err := Credential(r)
			if !present || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("present %v, err %v; want %q", present, err, tc.want)
			}
		})
	}
}
