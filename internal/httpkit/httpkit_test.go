package httpkit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

func TestSetErrorHeaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    *a2a.Error
		header string
		want   string
	}{
		{"unauthenticated", a2a.Errorf(a2a.Unauthenticated, `bad "token"\n`), "WWW-Authenticate",
			`Bearer realm="kfa", error="invalid_token", error_description="bad 'token''n"`},
		{"no credential", a2a.MissingCredential("send a token"), "WWW-Authenticate", `Bearer realm="kfa"`},
		{"scope", a2a.Errorf(a2a.PermissionDenied, "no").With("scope", "post"), "WWW-Authenticate",
			`Bearer realm="kfa", error="insufficient_scope", scope="post"`},
		{"scope unknown", a2a.Errorf(a2a.PermissionDenied, "no"), "WWW-Authenticate",
			`Bearer realm="kfa", error="insufficient_scope"`},
		{"rate limited", &a2a.Error{Kind: a2a.RateLimited, RetryAfter: 1500 * time.Millisecond}, "Retry-After", "2"},
		{"other", a2a.Errorf(a2a.NotFound, "x"), "WWW-Authenticate", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			SetErrorHeaders(h, tc.err)
			if got := h.Get(tc.header); got != tc.want {
				t.Fatalf("%s: %q, want %q", tc.header, got, tc.want)
			}
		})
	}
}

func TestBearer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers []string
		token   string
		present bool
		bad     bool
	}{
		{"none", nil, "", false, false},
		{"bearer", []string{"Bearer kfa_x"}, "kfa_x", true, false},
		{"lower case scheme", []string{"bearer  kfa_x "}, "kfa_x", true, false},
		{"basic", []string{"Basic abc"}, "", true, true},
		{"empty", []string{"Bearer  "}, "", true, true},
		{"twice", []string{"Bearer a", "Bearer b"}, "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, v := range tc.headers {
				r.Header.Add("Authorization", v)
			}
			tok, present, err := bearer(r.Header)
			if tok != tc.token || present != tc.present || (err != nil) != tc.bad {
				t.Fatalf("bearer = %q, %v, %v", tok, present, err)
			}
		})
	}
}

func TestDecodeJSONNamesTheField(t *testing.T) {
	var v struct {
		Body *string `json:"body"`
	}
	for _, tc := range []struct {
		name, body string
		kind       a2a.Kind
	}{
		{"syntax", `{"body":`, a2a.ParseError},
		{"duplicate key", `{"body":"a","body":"b"}`, a2a.InvalidParams},
		{"array", `[]`, a2a.InvalidParams},
		{"type", `{"body":3}`, a2a.InvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := DecodeJSON([]byte(tc.body), &v)
			e, ok := a2a.AsError(err)
			if !ok || e.Kind != tc.kind {
				t.Fatalf("%v, want %s", err, tc.kind.Reason)
			}
		})
	}
	if err := DecodeJSON([]byte(`{"body":3}`), &v); err == nil || !strings.Contains(err.Error(), "body") {
		t.Fatalf("type mismatch does not name the field: %v", err)
	}
}

// refusing is a body type that refuses a field itself, as api.ReplyRequest
// does.
type refusing struct{}

func (*refusing) UnmarshalJSON([]byte) error {
	return a2a.BadParam("bdy", `is not a field of a reply; send {"body": "..."}`)
}

// TestDecodeJSONKeepsATypesRefusal: a body type's own refusal reaches the
// client as it was written (its kind, field and words), not as the text
// of an internal error ("...expected shape: InvalidParamsError: bdy: ...").
func TestDecodeJSONKeepsATypesRefusal(t *testing.T) {
	err := DecodeJSON([]byte(`{"bdy":"Use logrotate."}`), &refusing{})
	e, ok := a2a.AsError(err)
	if !ok || e.Kind != a2a.InvalidParams || e.Message != `bdy: is not a field of a reply; send {"body": "..."}` ||
		len(e.Violations) != 1 || e.Violations[0].Field != "bdy" {
		t.Fatalf("%#v", err)
	}
}
