package mcpserver

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// originPolicy decides which browser origins may call the endpoint: the
// DNS-rebinding protection the MCP transport requires. A page can only
// send an Origin it was served from, so an allowed origin is one whose
// pages are kfa's own (or the operator's list).
type originPolicy struct {
	// explicit is the operator's list; when it is not empty, it is the
	// whole policy.
	explicit map[string]bool
	// public is the origin of the public URL: kfa's own pages.
	public string
	// listenAddr is the public listener's address, nil before it
	// listens. On loopback, http://127.0.0.1:PORT, http://localhost:PORT
	// and http://[::1]:PORT are kfa's pages too, for a browser on this
	// machine.
	listenAddr func() net.Addr
}

func newOriginPolicy(allowed []string, publicURL string, listenAddr func() net.Addr) *originPolicy {
	p := &originPolicy{explicit: map[string]bool{}, listenAddr: listenAddr}
	for _, o := range allowed {
		if n, ok := normalizeOrigin(o); ok {
			p.explicit[n] = true
		}
	}
	if publicURL != "" {
		if u, err := url.Parse(publicURL); err == nil {
			p.public, _ = normalizeOrigin(u.Scheme + "://" + u.Host)
		}
	}
	return p
}

// allows reports whether a request carrying this Origin header may pass.
func (p *originPolicy) allows(origin string) bool {
	o, ok := normalizeOrigin(origin)
	if !ok {
		return false // "null" (a sandboxed frame, a file: page) and garbage
	}
	if len(p.explicit) > 0 {
		return p.explicit[o]
	}
	if o == p.public {
		return true
	}
	return p.loopback(o)
}

// rule says which origins pass, for a refusal.
func (p *originPolicy) rule() string {
	if len(p.explicit) > 0 {
		return "only those kfa serve --mcp-allowed-origins lists are"
	}
	return "only kfa's own are (its public URL's, and its loopback ones when it listens on loopback); " +
		"kfa serve --mcp-allowed-origins can list others instead"
}

// loopback reports whether o is a loopback origin of the listening port
// while the listener is on a loopback address.
func (p *originPolicy) loopback(o string) bool {
	if p.listenAddr == nil {
		return false
	}
	addr := p.listenAddr()
	if addr == nil {
		return false
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return false
	}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		if n, _ := normalizeOrigin("http://" + h + ":" + port); n == o {
			return true
		}
	}
	return false
}

// normalizeOrigin is the form origins are compared in: scheme and host
// lower-cased, the scheme's default port dropped (browsers never send it,
// operators may write it), a trailing slash dropped. Anything but an
// http(s) scheme with a host and nothing after it is not an origin.
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(s), "/"))
	if err != nil || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", false
		}
		port = strconv.Itoa(n)
	}
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}
