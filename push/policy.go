package push

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Policy says which destinations push notifications may go to. By
// default only https to public addresses; the operator's allow list
// (--push-allow) adds host names and address ranges, plain http
// included. The zero Policy is the default.
type Policy struct {
	hosts []string       // lower case, no trailing dot
	nets  []netip.Prefix // masked
}

// ParseAllow reads an allow list: host names (hooks.internal), addresses
// (127.0.0.1, ::1) and ranges (10.0.0.0/8). Empty entries are ignored.
func ParseAllow(entries []string) (Policy, error) {
	var p Policy
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(e); err == nil {
			p.nets = append(p.nets, pfx.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			p.nets = append(p.nets, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		h := normalHost(e)
		if strings.ContainsAny(h, "/:@ ") || h == "" {
			return Policy{}, fmt.Errorf("%q is neither a host name, an IP address nor a CIDR range", e)
		}
		p.hosts = append(p.hosts, h)
	}
	return p, nil
}

// String lists the allowed entries, for logs and errors.
func (p Policy) String() string {
	out := slices.Clone(p.hosts)
	for _, n := range p.nets {
		out = append(out, n.String())
	}
	return strings.Join(out, ",")
}

func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// HostAllowed reports whether the allow list names host.
func (p Policy) HostAllowed(host string) bool {
	return slices.Contains(p.hosts, normalHost(host))
}

// IPAllowed reports whether the allow list covers ip.
func (p Policy) IPAllowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, n := range p.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// DestinationError is a destination the policy refuses; Rule names the
// rule ("loopback address", "https only", ...).
type DestinationError struct {
	Rule   string
	Detail string
}

func (e *DestinationError) Error() string { return e.Detail }

func refused(rule, format string, args ...any) *DestinationError {
	return &DestinationError{Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

const allowHint = "; push destinations must be public https unless --push-allow lists them"

// CheckURL is the check a config gets when it is created: a URL that is
// plainly not allowed (not http(s), credentials in it, an address or a
// name that is not public, plain http to a destination the allow list
// does not name) is refused, naming the rule. A host name is not
// resolved here: its addresses are checked when a delivery connects.
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, refused("absolute URL", "must be an absolute URL such as https://hooks.example.com/kfa")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return nil, refused("https only", "scheme %q is not allowed: push notifications are POSTed over https", u.Scheme)
	}
	if u.User != nil {
		return nil, refused("no credentials in URL", "must not carry user:password@; use authentication {scheme, credentials}")
	}
	if u.Fragment != "" {
		return nil, refused("no fragment", "must not have a #fragment")
	}
	host := u.Hostname()
	if host == "" {
		return nil, refused("absolute URL", "has no host")
	}
	if port := u.Port(); port != "" {
		if n, ok := parsePort(port); !ok || n == 0 {
			return nil, refused("absolute URL", "port %q is not a port number", port)
		}
	}
	allowedHost := p.HostAllowed(host)
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		if ip.Zone() != "" {
			return nil, refused("no zone", "an address with a zone (%s) is not allowed", host)
		}
		allowed := allowedHost || p.IPAllowed(ip)
		if !allowed {
			if rule, public := Classify(ip); !public {
				return nil, refused(rule, "%s is a %s address%s", ip, rule, allowHint)
			}
		}
		if scheme == "http" && !allowed {
			return nil, refused("https only", "plain http is allowed only to destinations --push-allow lists; use https")
		}
		return u, nil
	}
	if !allowedHost {
		if h := normalHost(host); h == "localhost" || strings.HasSuffix(h, ".localhost") {
			return nil, refused("loopback", "%s names this machine (loopback)%s", host, allowHint)
		}
		if scheme == "http" {
			return nil, refused("https only", "plain http is allowed only to destinations --push-allow lists; use https")
		}
		if net.ParseIP(host) == nil && strings.Trim(host, "0123456789.") == "" {
			// 2130706433, 0x7f.1 and friends: numeric forms some resolvers
			// read as addresses.
			return nil, refused("numeric host", "%s is not a host name nor a canonical IP address", host)
		}
	}
	return u, nil
}

func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= 65535
}

// CheckDial is the check of the address a delivery connects to, made at
// connect time, after name resolution, so that a name that resolves (or
// later rebinds) to a private address is refused all the same. plainHTTP
// says the request is not encrypted, which needs the allow list.
func (p Policy) CheckDial(host string, ip netip.Addr, plainHTTP bool) error {
	if p.HostAllowed(host) || p.IPAllowed(ip) {
		return nil
	}
	if plainHTTP {
		return refused("https only", "plain http to %s is not allowed: --push-allow does not list it", host)
	}
	if rule, public := Classify(ip); !public {
		if host == ip.String() {
			return refused(rule, "%s is a %s address%s", ip, rule, allowHint)
		}
		return refused(rule, "%s resolves to %s, a %s address%s", host, ip, rule, allowHint)
	}
	return nil
}

// special are the ranges that are not public destinations besides those
// netip classifies itself, with the name of the rule.
var special = []struct {
	pfx  netip.Prefix
	rule string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Classify names the rule that makes ip a non-public destination, or
// reports it public. IPv4 addresses inside IPv6 (mapped, NAT64) are
// judged as the IPv4 address they carry.
func Classify(ip netip.Addr) (rule string, public bool) {
	ip = ip.Unmap()
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		return Classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	switch {
	case !ip.IsValid():
		return "invalid", false
	case ip.IsUnspecified():
		return "unspecified", false
	case ip.IsLoopback():
		return "loopback", false
	case ip.IsPrivate():
		return "private", false
	case ip.IsLinkLocalUnicast():
		return "link-local (cloud metadata)", false
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast", false
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast", false
	}
	for _, s := range special {
		if s.pfx.Contains(ip) {
			return s.rule, false
		}
	}
	return "", true
}

// Destination is what per-destination ordering keys on: the scheme, host
// and port of a URL, in lower case with the default port spelled out.
func Destination(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = "443"
		if scheme == "http" {
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(normalHost(u.Hostname()), port)
}
