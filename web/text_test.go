package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLocalPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "/"},
		{"/", "/"},
		{"/discussions/01J?x=1#a", "/discussions/01J?x=1#a"},
		{"//evil.test/x", "/"},
		{`/\evil.test`, "/"},
		{"https://evil.test/", "/"},
		{"javascript:alert(1)", "/"},
		{"/a\r\nSet-Cookie: x", "/"},
		{"/a\\b", "/"},
		{"/login", "/"},
		{"/logout?x", "/"},
		{"/" + strings.Repeat("a", 2000), "/"},
	} {
		if got := localPath(tc.in); got != tc.want {
			t.Errorf("localPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWantsHTML(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, accept string
		want                       bool
	}{
		{"browser page", "GET", "/nope", "text/html,application/xhtml+xml", true},
		{"head", "HEAD", "/nope", "text/html", true},
		{"no accept", "GET", "/nope", "", false},
		{"json client", "GET", "/nope", "application/json", false},
		{"post", "POST", "/nope", "text/html", false},
		{"a2a path", "GET", "/a2a/v1/nope", "text/html", false},
		{"api path", "GET", "/api/v1/nope", "text/html", false},
		{"well-known", "GET", "/.well-known/nope", "text/html", false},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		if got := WantsHTML(r); got != tc.want {
			t.Errorf("%s: WantsHTML = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDays(t *testing.T) {
	for _, tc := range []struct {
		hours float64
		want  string
	}{{720, "30 days"}, {1, "1 hour"}, {36, "36 hours"}, {0.5, "0.5 hours"}} {
		if got := days(tc.hours); got != tc.want {
			t.Errorf("days(%v) = %q, want %q", tc.hours, got, tc.want)
		}
	}
}
