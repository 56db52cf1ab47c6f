package mcpserver

import (
	"net"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{in: "https://app.example.com", want: "https://app.example.com", ok: true},
		{in: "HTTPS://APP.Example.COM/", want: "https://app.example.com", ok: true},
		{in: "https://app.example.com:443", want: "https://app.example.com", ok: true},
		{in: "http://localhost:80", want: "http://localhost", ok: true},
		{in: "http://localhost:0080", want: "http://localhost", ok: true},
		{in: "http://localhost:8080", want: "http://localhost:8080", ok: true},
		{in: "http://[::1]:8080", want: "http://[::1]:8080", ok: true},
		{in: "http://[0:0:0:0:0:0:0:1]:8080", want: "http://[0:0:0:0:0:0:0:1]:8080", ok: true},
		{in: "null"},
		{in: ""},
		{in: "file://"},
		{in: "ftp://example.com"},
		{in: "https://example.com/path"},
		{in: "https://user@example.com"},
		{in: "https://example.com?x=1"},
		{in: "https://example.com:99999"},
		{in: "https://example.com:x"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := normalizeOrigin(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("normalizeOrigin(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestOriginPolicy: with no list, kfa's own origins pass (the public
// URL's, and the loopback ones of the port while listening on loopback);
// a list replaces them.
func TestOriginPolicy(t *testing.T) {
	at := func(addr string) func() net.Addr {
		return func() net.Addr {
			a, err := net.ResolveTCPAddr("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
	}
	tests := []struct {
		name    string
		allowed []string
		public  string
		listen  func() net.Addr
		origin  string
		want    bool
	}{
		{name: "the public URL's origin", public: "https://kfa.example/base", listen: at("127.0.0.1:8080"), origin: "https://kfa.example", want: true},
		{name: "the public URL's origin with its default port", public: "https://kfa.example:443", origin: "https://KFA.example", want: true},
		{name: "the public URL's origin over the other scheme", public: "https://kfa.example", origin: "http://kfa.example"},
		{name: "a subdomain of the public URL", public: "https://kfa.example", origin: "https://x.kfa.example"},
		{name: "127.0.0.1 on a loopback listener", public: "https://kfa.example", listen: at("127.0.0.1:18080"), origin: "http://127.0.0.1:18080", want: true},
		{name: "localhost on a loopback listener", public: "https://kfa.example", listen: at("127.0.0.1:18080"), origin: "http://localhost:18080", want: true},
		{name: "::1 on a loopback listener", public: "https://kfa.example", listen: at("127.0.0.1:18080"), origin: "http://[::1]:18080", want: true},
		{name: "localhost on an IPv6 loopback listener", public: "https://kfa.example", listen: at("[::1]:18080"), origin: "http://localhost:18080", want: true},
		{name: "loopback, another port", public: "https://kfa.example", listen: at("127.0.0.1:18080"), origin: "http://localhost:3000"},
		{name: "loopback over https", public: "https://kfa.example", listen: at("127.0.0.1:18080"), origin: "https://localhost:18080"},
		{name: "loopback origin, listener on every interface", public: "https://kfa.example", listen: at("0.0.0.0:18080"), origin: "http://localhost:18080"},
		{name: "loopback origin, listener on a LAN address", public: "https://kfa.example", listen: at("10.1.2.3:18080"), origin: "http://127.0.0.1:18080"},
		{name: "loopback origin, not listening yet", public: "https://kfa.example", listen: func() net.Addr { return nil }, origin: "http://127.0.0.1:18080"},
		{name: "a rebinding page", public: "http://127.0.0.1:18080", listen: at("127.0.0.1:18080"), origin: "http://evil.example:18080"},
		{name: "null", public: "http://127.0.0.1:18080", listen: at("127.0.0.1:18080"), origin: "null"},
		{name: "a listed origin", allowed: []string{"https://app.example.com/"}, public: "https://kfa.example", origin: "https://APP.example.com", want: true},
		{name: "a list replaces the public origin", allowed: []string{"https://app.example.com"}, public: "https://kfa.example", origin: "https://kfa.example"},
		{name: "a list replaces the loopback origins", allowed: []string{"https://app.example.com"}, listen: at("127.0.0.1:18080"), origin: "http://localhost:18080"},
		{name: "a list can name them", allowed: []string{"https://app.example.com", "http://localhost:18080"}, listen: at("127.0.0.1:18080"), origin: "http://localhost:18080", want: true},
		{name: "no public URL, no list (the admin socket)", origin: "http://localhost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newOriginPolicy(tc.allowed, tc.public, tc.listen)
			if got := p.allows(tc.origin); got != tc.want {
				t.Fatalf("allows(%q) = %v, want %v", tc.origin, got, tc.want)
			}
		})
	}
}
