package certs_test

import (
	"strings"
	"testing"

	"github.com/kfa-project/kfa/certs"
)

func TestDomain(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{name: "plain", in: "kfa.example.com", want: "kfa.example.com"},
		{name: "upper case and a trailing dot", in: "KFA.Example.COM.", want: "kfa.example.com"},
		{name: "internationalized", in: "bücher.example", want: "xn--bcher-kva.example"},
		{name: "IPv4", in: "192.0.2.1", err: "IP address"},
		{name: "IPv6", in: "2001:db8::1", err: "IP address"},
		{name: "bracketed IPv6", in: "[::1]", err: "IP address"},
		{name: "wildcard", in: "*.example.com", err: "wildcard"},
		{name: "URL", in: "https://kfa.example.com", err: "no scheme, port or path"},
		{name: "port", in: "kfa.example.com:443", err: "no scheme, port or path"},
		{name: "single label", in: "localhost", err: "single label"},
		{name: "empty", in: " ", err: "empty"},
		{name: "underscore", in: "a_b.example.com", err: "not a valid host name"},
		{name: "empty label", in: "a..example.com", err: "not a valid host name"},
		{name: "hyphen at a label's end", in: "a-.example.com", err: "not a valid host name"},
		{name: "label too long", in: strings.Repeat("a", 64) + ".example.com", err: "not a valid host name"},
		{name: "name too long", in: strings.Repeat("a.", 127) + "com", err: "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := certs.Domain(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Domain(%q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Domain(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}
