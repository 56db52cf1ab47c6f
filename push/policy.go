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
			if v := classify(ip); !v.public {
				return nil, refused(v.rule, "%s%s", v.describe(ip.String(), ip), allowHint)
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
		if numericHost(host) {
			return nil, refused("numeric host", "%s is a numeric host, which resolvers read as an IPv4 address; use a host name or a canonical IP address", host)
		}
		if scheme == "http" {
			return nil, refused("https only", "plain http is allowed only to destinations --push-allow lists; use https")
		}
	}
	return u, nil
}

// numericHost reports whether a host that is not a canonical IP address
// ends in a number: 2130706433, 017700000001, 0x7f000001, 127.1, 0x7f.1
// and every other form an inet_aton-style parser (and the URL standard's
// host parser) reads as an IPv4 address, in decimal, octal or hex, dotted
// or not. No DNS name has a numeric last label.
func numericHost(host string) bool {
	h := strings.TrimSuffix(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if rest, ok := strings.CutPrefix(strings.ToLower(last), "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
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
	if v := classify(ip); !v.public {
		return refused(v.rule, "%s%s", v.describe(host, ip), allowHint)
	}
	return nil
}

var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

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
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// An embedding is an IPv6 range whose addresses carry IPv4 addresses
// (RFC 4291, 2765, 3056, 4380, 6052, 8215): such an address reaches, or
// names, the IPv4 address it carries, so the IPv4 rules judge it.
// Transition ranges kfa refuses whatever they carry (6to4 and Teredo
// relays are deprecated, RFC 7526) say so with refuse.
type embedding struct {
	pfx    netip.Prefix
	form   string
	at     [][4]int // byte offsets of each IPv4 address the range carries
	xor    bool     // the last address is stored inverted (Teredo's client)
	refuse bool     // not a public destination even when what it carries is
}

var embeddings = []embedding{
	// ::ffff:0:0/96 (IPv4-mapped) is unmapped before any of these.
	{pfx: netip.MustParsePrefix("::/96"), form: "IPv4-compatible", at: [][4]int{{12, 13, 14, 15}}},
	{pfx: netip.MustParsePrefix("::ffff:0:0:0/96"), form: "IPv4-translated", at: [][4]int{{12, 13, 14, 15}}},
	{pfx: netip.MustParsePrefix("64:ff9b::/96"), form: "NAT64", at: [][4]int{{12, 13, 14, 15}}},
	// A local-use NAT64 prefix may be /96, /64, /56 or /48 long, and the
	// IPv4 address sits where its length puts it (RFC 6052 §2.2, skipping
	// bits 64-71): every place is judged.
	{pfx: netip.MustParsePrefix("64:ff9b:1::/48"), form: "NAT64 (local-use)",
		at: [][4]int{{12, 13, 14, 15}, {9, 10, 11, 12}, {7, 9, 10, 11}, {6, 7, 9, 10}}},
	{pfx: netip.MustParsePrefix("2002::/16"), form: "6to4", at: [][4]int{{2, 3, 4, 5}}, refuse: true},
	{pfx: netip.MustParsePrefix("2001::/32"), form: "Teredo", at: [][4]int{{4, 5, 6, 7}, {12, 13, 14, 15}}, xor: true, refuse: true},
}

// carried returns the embedding ip belongs to and the IPv4 addresses it
// carries, or ok false for an address that carries none.
func carried(ip netip.Addr) (e embedding, v4s []netip.Addr, ok bool) {
	if !ip.Is6() {
		return e, nil, false
	}
	b := ip.As16()
	for _, e := range embeddings {
		if !e.pfx.Contains(ip) {
			continue
		}
		for i, at := range e.at {
			a := [4]byte{b[at[0]], b[at[1]], b[at[2]], b[at[3]]}
			if e.xor && i == len(e.at)-1 {
				for j := range a {
					a[j] ^= 0xff
				}
			}
			v4s = append(v4s, netip.AddrFrom4(a))
		}
		return e, v4s, true
	}
	return e, nil, false
}

// verdict is why an address is not a public destination: the rule, and
// for an IPv6 address that carries a non-public IPv4 address, that
// address and the form that carries it.
type verdict struct {
	rule   string
	public bool
	v4     netip.Addr // valid when the IPv4 rules decided
	form   string
}

// describe says why ip is refused, naming it as host (the URL's host or
// the name that resolved to it).
func (v verdict) describe(host string, ip netip.Addr) string {
	literal := host == ip.String()
	switch {
	case v.v4.IsValid() && literal:
		return fmt.Sprintf("%s carries the IPv4 address %s (%s), a %s address", ip, v.v4, v.form, v.rule)
	case v.v4.IsValid():
		return fmt.Sprintf("%s resolves to %s, which carries the IPv4 address %s (%s), a %s address", host, ip, v.v4, v.form, v.rule)
	case literal:
		return fmt.Sprintf("%s is a %s address", ip, v.rule)
	}
	return fmt.Sprintf("%s resolves to %s, a %s address", host, ip, v.rule)
}

// Classify names the rule that makes ip a non-public destination, or
// reports it public. An IPv6 address that carries an IPv4 address
// (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo) is
// judged by the rules of the IPv4 address it carries; 6to4 and Teredo are
// refused even when that one is public.
func Classify(ip netip.Addr) (rule string, public bool) {
	v := classify(ip)
	return v.rule, v.public
}

func classify(ip netip.Addr) verdict {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return verdict{rule: "invalid"}
	case ip.IsUnspecified():
		return verdict{rule: "unspecified"}
	case ip.IsLoopback():
		return verdict{rule: "loopback"}
	}
	if e, v4s, ok := carried(ip); ok {
		// Of several places, the one that names an address other than
		// 0.0.0.0/8 (the zeros around an address another place carries)
		// explains the refusal best.
		var refusal *verdict
		for _, v4 := range v4s {
			if v := classify(v4); !v.public && (refusal == nil || thisNetwork.Contains(refusal.v4) && !thisNetwork.Contains(v4)) {
				refusal = &verdict{rule: v.rule, v4: v4, form: e.form}
			}
		}
		switch {
		case refusal != nil:
			return *refusal
		case e.refuse:
			return verdict{rule: e.form}
		}
		return verdict{public: true}
	}
	switch {
	case ip.IsPrivate():
		return verdict{rule: "private"}
	case ip.IsLinkLocalUnicast():
		return verdict{rule: "link-local (cloud metadata)"}
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return verdict{rule: "multicast"}
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return verdict{rule: "broadcast"}
	}
	for _, s := range special {
		if s.pfx.Contains(ip) {
			return verdict{rule: s.rule}
		}
	}
	return verdict{public: true}
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
