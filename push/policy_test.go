package push

import (
	"net/netip"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		ip     string
		rule   string // "" for public
		public bool
	}{
		{"8.8.8.8", "", true},
		{"2606:4700:4700::1111", "", true},
		{"127.0.0.1", "loopback", false},
		{"127.255.0.9", "loopback", false},
		{"::1", "loopback", false},
		{"10.0.0.1", "private", false},
		{"172.16.5.4", "private", false},
		{"192.168.1.1", "private", false},
		{"fd00::1", "private", false},
		{"fc00::1", "private", false},
		{"169.254.169.254", "link-local (cloud metadata)", false},
		{"fe80::1", "link-local (cloud metadata)", false},
		{"0.0.0.0", "unspecified", false},
		{"::", "unspecified", false},
		{"0.1.2.3", "this-network", false},
		{"100.64.0.1", "shared (carrier-grade NAT)", false},
		{"100.100.100.200", "shared (carrier-grade NAT)", false},
		{"224.0.0.1", "multicast", false},
		{"ff02::1", "multicast", false},
		{"255.255.255.255", "broadcast", false},
		{"240.0.0.1", "reserved", false},
		{"192.0.2.1", "documentation", false},
		{"2001:db8::1", "documentation", false},
		{"::ffff:127.0.0.1", "loopback", false},
		{"::ffff:10.1.1.1", "private", false},
		{"64:ff9b::a9fe:a9fe", "link-local (cloud metadata)", false}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", "", true},                               // NAT64 of 8.8.8.8
		// IPv4 inside IPv6 is judged by the IPv4 rules, in every form.
		{"::7f00:1", "loopback", false},                       // IPv4-compatible
		{"::a9fe:a9fe", "link-local (cloud metadata)", false}, // IPv4-compatible
		{"::a00:1", "private", false},                         // IPv4-compatible
		{"::808:808", "", true},                               // IPv4-compatible, public
		{"::ffff:0:7f00:1", "loopback", false},                // IPv4-translated
		{"::ffff:0:a9fe:a9fe", "link-local (cloud metadata)", false},
		{"::ffff:0:808:808", "", true},
		{"64:ff9b::7f00:1", "loopback", false},   // NAT64
		{"64:ff9b:1::7f00:1", "loopback", false}, // NAT64 local-use, /96
		{"64:ff9b:1::a9fe:a9fe", "link-local (cloud metadata)", false},
		{"64:ff9b:1:7f00:0:100::", "loopback", false},   // NAT64 local-use, /48
		{"64:ff9b:1:a:a00:1:808:808", "private", false}, // NAT64 local-use, /56: 10.0.0.1
		{"64:ff9b:1:808:8:808:808:808", "", true},       // public wherever it is read
		{"2002:7f00:1::", "loopback", false},            // 6to4
		{"2002:a9fe:a9fe::1", "link-local (cloud metadata)", false},
		{"2002:808:808::1", "6to4", false},                          // 6to4 of a public address: still refused
		{"2001:0:7f00:1::", "loopback", false},                      // Teredo: the server
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback", false}, // Teredo: the client, inverted (127.0.0.1)
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", "Teredo", false},   // Teredo of public addresses: still refused
		{"2001:2::1", "IETF protocol", false},
	} {
		rule, public := Classify(netip.MustParseAddr(tc.ip))
		if rule != tc.rule || public != tc.public {
			t.Errorf("%s: %q %v, want %q %v", tc.ip, rule, public, tc.rule, tc.public)
		}
	}
}

func TestCheckURL(t *testing.T) {
	allow, err := ParseAllow([]string{"127.0.0.1", "10.1.0.0/16", "Hooks.Internal.", " ", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		policy Policy
		url    string
		rule   string // "" when allowed
	}{
		{"public https", Policy{}, "https://hooks.example.com/kfa?x=1", ""},
		{"public https with a port", Policy{}, "https://hooks.example.com:8443/kfa", ""},
		{"public IP", Policy{}, "https://8.8.8.8/", ""},
		{"plain http", Policy{}, "http://hooks.example.com/", "https only"},
		{"ftp", Policy{}, "ftp://hooks.example.com/", "https only"},
		{"loopback", Policy{}, "https://127.0.0.1/", "loopback"},
		{"loopback over http", Policy{}, "http://127.0.0.1:8080/", "loopback"},
		{"IPv6 loopback", Policy{}, "https://[::1]:8443/", "loopback"},
		{"private", Policy{}, "https://10.0.0.1/", "private"},
		{"metadata", Policy{}, "https://169.254.169.254/latest/meta-data/", "link-local (cloud metadata)"},
		{"localhost", Policy{}, "https://localhost/", "loopback"},
		{"a .localhost name", Policy{}, "https://api.LOCALHOST./", "loopback"},
		{"decimal address", Policy{}, "https://2130706433/", "numeric host"},
		{"mapped v6", Policy{}, "https://[::ffff:127.0.0.1]/", "loopback"},
		{"IPv4-compatible loopback", Policy{}, "https://[::7f00:1]/", "loopback"},
		{"IPv4-compatible metadata", Policy{}, "https://[::a9fe:a9fe]/", "link-local (cloud metadata)"},
		{"IPv4-translated loopback", Policy{}, "https://[::ffff:0:7f00:1]/", "loopback"},
		{"NAT64 local-use loopback", Policy{}, "https://[64:ff9b:1::7f00:1]/", "loopback"},
		{"6to4 of a private address", Policy{}, "https://[2002:a00:1::1]/", "private"},
		{"IPv4-compatible public", Policy{}, "https://[::808:808]/", ""},
		{"hex, dotted", Policy{}, "https://0x7f.1/", "numeric host"},
		{"hex", Policy{}, "https://0x7f000001/", "numeric host"},
		{"hex, upper case", Policy{}, "https://0X7F.0.0.1/", "numeric host"},
		{"octal", Policy{}, "https://017700000001/", "numeric host"},
		{"octal, dotted", Policy{}, "https://0177.0.0.1/", "numeric host"},
		{"short dotted", Policy{}, "https://127.1/", "numeric host"},
		{"trailing dot", Policy{}, "https://127.0.0.1./", "numeric host"},
		{"a numeric last label", Policy{}, "https://hooks.0x1/", "numeric host"},
		{"numeric over http", Policy{}, "http://0x7f.1/", "numeric host"},
		{"hex-looking labels", Policy{}, "https://0x7f.example.com/", ""},
		{"digits before a name", Policy{}, "https://1.2.3.example/", ""},
		{"zone", Policy{}, "https://[fe80::1%25eth0]/", "no zone"},
		{"userinfo", Policy{}, "https://u:p@hooks.example.com/", "no credentials in URL"},
		{"fragment", Policy{}, "https://hooks.example.com/#x", "no fragment"},
		{"relative", Policy{}, "/hook", "absolute URL"},
		{"no host", Policy{}, "https:///hook", "absolute URL"},
		{"bad port", Policy{}, "https://hooks.example.com:99999/", "absolute URL"},
		{"opaque", Policy{}, "https:hooks.example.com", "absolute URL"},
		{"allowed loopback", allow, "http://127.0.0.1:9000/hook", ""},
		{"allowed IPv6 loopback", allow, "http://[::1]:9000/hook", ""},
		{"allowed range", allow, "http://10.1.2.3/", ""},
		{"outside the range", allow, "https://10.2.0.1/", "private"},
		{"allowed name, any case", allow, "http://hooks.internal/x", ""},
		{"unlisted name over http", allow, "http://other.internal/", "https only"},
	} {
		_, err := tc.policy.CheckURL(tc.url)
		var de *DestinationError
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.rule != "" && (err == nil || !asDest(err, &de) || de.Rule != tc.rule):
			t.Errorf("%s: %v, want rule %q", tc.name, err, tc.rule)
		}
	}
}

func asDest(err error, de **DestinationError) bool {
	d, ok := err.(*DestinationError)
	*de = d
	return ok
}

func TestCheckDial(t *testing.T) {
	allow, err := ParseAllow([]string{"127.0.0.1", "hooks.internal"})
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	for _, tc := range []struct {
		name   string
		policy Policy
		host   string
		ip     netip.Addr
		plain  bool
		want   string // a part of the error; "" when allowed
	}{
		{"public", Policy{}, "hooks.example.com", ip("93.184.216.34"), false, ""},
		{"rebinding to loopback", Policy{}, "hooks.example.com", ip("127.0.0.1"), false, "resolves to 127.0.0.1, a loopback address"},
		{"rebinding to metadata", Policy{}, "hooks.example.com", ip("169.254.169.254"), false, "link-local"},
		{"literal private", Policy{}, "10.0.0.1", ip("10.0.0.1"), false, "10.0.0.1 is a private address"},
		{"rebinding to IPv4-compatible loopback", Policy{}, "hooks.example.com", ip("::7f00:1"), false,
			"resolves to ::7f00:1, which carries the IPv4 address 127.0.0.1 (IPv4-compatible), a loopback address"},
		{"rebinding to NAT64 metadata", Policy{}, "hooks.example.com", ip("64:ff9b:1::a9fe:a9fe"), false, "169.254.169.254 (NAT64 (local-use))"},
		{"literal IPv4-translated", Policy{}, "::ffff:0:a00:1", ip("::ffff:0:a00:1"), false,
			"::ffff:0:a00:1 carries the IPv4 address 10.0.0.1 (IPv4-translated), a private address"},
		{"plain http to a public address", Policy{}, "hooks.example.com", ip("93.184.216.34"), true, "plain http"},
		{"allowed address", allow, "127.0.0.1", ip("127.0.0.1"), true, ""},
		{"allowed name resolving anywhere", allow, "hooks.internal", ip("10.9.9.9"), true, ""},
		{"another name resolving to an allowed address", allow, "rebind.example.com", ip("127.0.0.1"), false, ""},
		{"another name over http to an allowed address", allow, "rebind.example.com", ip("127.0.0.1"), true, ""},
	} {
		err := tc.policy.CheckDial(tc.host, tc.ip, tc.plain)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseAllow(t *testing.T) {
	p, err := ParseAllow([]string{"127.0.0.1", "10.0.0.0/8", "hooks.internal"})
	if err != nil || p.String() != "hooks.internal,127.0.0.1/32,10.0.0.0/8" {
		t.Fatalf("%q %v", p.String(), err)
	}
	for _, bad := range []string{"http://x", "a b", "10.0.0.0/99", "user@host"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestDestination(t *testing.T) {
	for in, want := range map[string]string{
		"https://Hooks.Example.com/x?y": "https://hooks.example.com:443",
		"http://127.0.0.1:9000/":        "http://127.0.0.1:9000",
		"http://[::1]/":                 "http://[::1]:80",
	} {
		if got := Destination(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// FuzzCheckURL: a URL the policy accepts is absolute http(s) with a host,
// carries no credentials, and, when its host is an address, names a
// public one (the default policy allows nothing else).
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/k", "http://127.0.0.1/", "https://[::ffff:10.0.0.1]/",
		"https://2130706433/", "https://u:p@x/", "https://169.254.169.254/", "https://localhost./",
		"https://0x7f.1/", "https://[::7f00:1]/", "https://[64:ff9b:1::a9fe:a9fe]/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Policy{}.CheckURL(raw)
		if err != nil {
			return
		}
		if u.Scheme != "https" && u.Scheme != "HTTPS" && !strings.EqualFold(u.Scheme, "https") {
			t.Fatalf("%q accepted with scheme %q", raw, u.Scheme)
		}
		if u.Hostname() == "" || u.User != nil {
			t.Fatalf("%q accepted: %+v", raw, u)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
			if _, public := Classify(ip); !public {
				t.Fatalf("%q accepted with a non-public address", raw)
			}
		}
	})
}
