package certs_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/certs"
)

// TestACMEHTTPHandler: plain HTTP is redirected to HTTPS on one of the
// domains (never to a name a Host header made up), on the HTTPS port;
// a method with a body is refused; an unknown challenge is a 404.
func TestACMEHTTPHandler(t *testing.T) {
	for _, tc := range []struct {
		name, method, host, target, port string
		status                           int
		location                         string
	}{
		{name: "GET", method: "GET", host: "kfa.example.com", target: "/discussions?q=x", status: 301, location: "https://kfa.example.com/discussions?q=x"},
		{name: "HEAD, second domain, a port in Host", method: "HEAD", host: "www.example.com:80", target: "/", status: 301, location: "https://www.example.com/"},
		{name: "upper case", method: "GET", host: "KFA.example.com", target: "/", status: 301, location: "https://kfa.example.com/"},
		{name: "HTTPS on another port", method: "GET", host: "kfa.example.com", target: "/a", port: "8443", status: 301, location: "https://kfa.example.com:8443/a"},
		{name: "port 443 left out", method: "GET", host: "kfa.example.com", target: "/a", port: "443", status: 301, location: "https://kfa.example.com/a"},
		{name: "a Host that is none of the domains", method: "GET", host: "evil.example", target: "/x", status: 301, location: "https://kfa.example.com/x"},
		{name: "POST", method: "POST", host: "kfa.example.com", target: "/a2a/v1/message:send", status: 400},
		{name: "unknown challenge", method: "GET", host: "kfa.example.com", target: "/.well-known/acme-challenge/nope", status: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := certs.NewACME(certs.ACMEOptions{
				Domains: []string{"kfa.example.com", "www.example.com"}, Cache: mustDirCache(t),
				HTTP01: true, HTTPSPort: tc.port,
			})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(tc.method, tc.target, nil)
			req.Host = tc.host
			rec := httptest.NewRecorder()
			a.HTTPHandler().ServeHTTP(rec, req)
			if rec.Code != tc.status || rec.Header().Get("Location") != tc.location {
				t.Fatalf("%s %s (Host %s) = %d, Location %q; want %d, %q", tc.method, tc.target, tc.host,
					rec.Code, rec.Header().Get("Location"), tc.status, tc.location)
			}
		})
	}
	a, err := certs.NewACME(certs.ACMEOptions{Domains: []string{"kfa.example.com"}, Cache: mustDirCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if a.HTTPHandler() != nil {
		t.Fatal("an HTTP handler without HTTP01")
	}
}

func mustDirCache(t *testing.T) certs.Cache {
	t.Helper()
	c, err := certs.DirCache(t.TempDir() + "/acme")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCacheKey: each CA's state has its own keys, readable as file
// names.
func TestCacheKey(t *testing.T) {
	prod := certs.CacheKey("https://acme-v02.api.letsencrypt.org/directory", "kfa.example.com")
	staging := certs.CacheKey("https://acme-staging-v02.api.letsencrypt.org/directory", "kfa.example.com")
	other := certs.CacheKey("https://ca.internal:9000/acme/other/directory", "kfa.example.com")
	same := certs.CacheKey("https://ca.internal:9000/acme/acme/directory", "kfa.example.com")
	if !strings.HasPrefix(prod, "acme-v02.api.letsencrypt.org-") || !strings.HasSuffix(prod, "_kfa.example.com") || strings.ContainsAny(prod, "/:") {
		t.Fatalf("CacheKey = %q", prod)
	}
	if prod == staging || other == same || !strings.HasPrefix(other, "ca.internal_9000-") {
		t.Fatalf("keys of different directories meet: %q %q %q %q", prod, staging, other, same)
	}
}
