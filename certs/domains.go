package certs

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"golang.org/x/net/idna"
)

// Domain checks one name given to --acme-domain and returns it in the
// form certificates and SNI use: lower case, ASCII (an internationalized
// name in its xn-- form), without a trailing dot. The error says what is
// wrong with it.
func Domain(name string) (string, error) {
	n := strings.TrimSuffix(strings.TrimSpace(name), ".")
	switch {
	case n == "":
		return "", errors.New("empty name")
	case net.ParseIP(strings.Trim(n, "[]")) != nil:
		return "", fmt.Errorf("%s is an IP address: ACME certificates here are for DNS names (serve an address with --tls-cert and --tls-key)", name)
	case strings.Contains(n, "*"):
		return "", fmt.Errorf("%s is a wildcard: a wildcard certificate needs the DNS-01 challenge, which kfa does not answer; name each host", name)
	case strings.ContainsAny(n, ":/?#@ "):
		return "", fmt.Errorf("%q is not a host name (give the name alone: no scheme, port or path)", name)
	}
	a, err := idna.Lookup.ToASCII(n)
	if err != nil {
		return "", fmt.Errorf("%q is not a valid host name: %v", name, err)
	}
	if len(a) > 253 {
		return "", fmt.Errorf("%s is longer than a DNS name can be (253 characters)", name)
	}
	if !strings.Contains(a, ".") {
		return "", fmt.Errorf("%s has a single label: a CA issues for names such as kfa.example.com", name)
	}
	for _, l := range strings.Split(a, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return "", fmt.Errorf("%q is not a valid host name (label %q)", name, l)
		}
	}
	return a, nil
}
