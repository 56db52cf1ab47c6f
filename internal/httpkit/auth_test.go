package httpkit

import (
	"errors"
	"net/http/httptest"
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
