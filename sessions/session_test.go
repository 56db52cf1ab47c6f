package sessions

import (
	"strings"
	"testing"
)

func TestFormTokens(t *testing.T) {
	a, b := NewNonce(), NewNonce()
	tok := FormToken(a, PurposeSession)
	for _, tc := range []struct {
		name         string
		key, purpose string
		token        string
		want         bool
	}{
		{"own", a, PurposeSession, tok, true},
		{"other key", b, PurposeSession, tok, false},
		{"other purpose", a, PurposeSignIn, tok, false},
		{"empty token", a, PurposeSession, "", false},
		{"empty key", "", PurposeSession, FormToken("", PurposeSession), false},
		{"truncated", a, PurposeSession, tok[:len(tok)-1], false},
	} {
		if got := CheckFormToken(tc.key, tc.purpose, tc.token); got != tc.want {
			t.Errorf("%s: CheckFormToken = %v, want %v", tc.name, got, tc.want)
		}
	}
	if FormToken(a, PurposeSession) != tok {
		t.Error("a form token is not stable for its key")
	}
}

func TestWellFormed(t *testing.T) {
	id := NewNonce()
	for _, tc := range []struct {
		name string
		id   string
		want bool
	}{
		{"new id", id, true},
		{"empty", "", false},
		{"short", id[1:], false},
		{"long", id + "A", false},
		{"not base64url", "!" + id[1:], false},
		{"padded", id[:len(id)-1] + "=", false},
		{"spaces", strings.Repeat(" ", len(id)), false},
	} {
		if got := WellFormed(tc.id); got != tc.want {
			t.Errorf("%s: WellFormed(%q) = %v, want %v", tc.name, tc.id, got, tc.want)
		}
	}
	if NewNonce() == id {
		t.Error("two ids are equal")
	}
}
