package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// LetsEncrypt is the default ACME directory: Let's Encrypt's production.
const LetsEncrypt = autocert.DefaultACMEDirectory

// DefaultCheckEvery is how often the certificates are checked: the
// cache (another process may have renewed one) and the CA's renewal
// information. Let's Encrypt asks for its renewal information every six
// hours.
const DefaultCheckEvery = 6 * time.Hour

const userAgent = "kfa"

// ACMEOptions configure NewACME.
type ACMEOptions struct {
	// Domains are the names to obtain certificates for (checked by
	// Domain); a handshake for any other name fails.
	Domains []string
	// Email is the account's contact, for the CA's expiry and incident
	// mail; optional.
	Email string
	// Directory is the ACME directory URL; LetsEncrypt when empty.
	Directory string
	// Cache keeps the account, the certificates and the challenges'
	// answers: DirCache, or a SharedCache for several processes.
	Cache Cache
	// HTTPClient talks to the CA; nil: one that trusts the system roots
	// (SSL_CERT_FILE and SSL_CERT_DIR included).
	HTTPClient *http.Client
	// HTTP01 answers HTTP-01 challenges too, besides TLS-ALPN-01 on the
	// HTTPS listener: set when HTTPHandler is served on port 80.
	HTTP01 bool
	// HTTPSPort is the port of the HTTPS URLs plain HTTP requests are
	// redirected to; "" or "443" leaves it out.
	HTTPSPort string
	// CheckEvery is how often the certificates are checked (the cache and
	// the CA's renewal information); DefaultCheckEvery when 0.
	CheckEvery time.Duration
	Log        *slog.Logger
}

// ACME serves certificates from an ACME CA (autocert): obtained on the
// first handshake for a name, or as soon as Start runs, renewed a third
// of their lifetime before they expire, and replaced whenever the CA's
// renewal information says so. It answers TLS-ALPN-01 challenges on the
// HTTPS listener, and HTTP-01 ones through HTTPHandler.
type ACME struct {
	o     ACMEOptions
	cache Cache // o.Cache, under the directory's namespace
	ari   *ARI
	cur   atomic.Pointer[manager]
	swapM sync.Mutex // one replacement at a time
	loop  loop
}

// manager is one autocert manager with its HTTP handler.
type manager struct {
	m    *autocert.Manager
	http http.Handler
}

// NewACME checks nothing with the CA yet: that starts with the first
// handshake, or Start.
func NewACME(o ACMEOptions) (*ACME, error) {
	if len(o.Domains) == 0 {
		return nil, errors.New("no domain")
	}
	if o.Cache == nil {
		return nil, errors.New("no cache")
	}
	o.Domains = slices.Clone(o.Domains) // read by the checks while the caller holds its own
	if o.Directory == "" {
		o.Directory = LetsEncrypt
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: time.Minute}
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = DefaultCheckEvery
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	a := &ACME{o: o, ari: NewARI(o.HTTPClient, o.Directory, nil)}
	a.cache = a.namespace(o.Cache)
	a.cur.Store(a.newManager(a.cache))
	return a, nil
}

// namespace keeps c's keys under the directory's (CacheKey).
func (a *ACME) namespace(c Cache) Cache {
	return namespaced{Cache: c, prefix: CacheKey(a.o.Directory, "")}
}

func (a *ACME) newManager(c Cache) *manager {
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      c,
		HostPolicy: autocert.HostWhitelist(a.o.Domains...),
		Email:      a.o.Email,
		Client:     &acme.Client{DirectoryURL: a.o.Directory, HTTPClient: a.o.HTTPClient, UserAgent: userAgent},
	}
	mg := &manager{m: m}
	if a.o.HTTP01 {
		// HTTPHandler is also what turns HTTP-01 on in the manager.
		mg.http = m.HTTPHandler(http.HandlerFunc(a.redirect))
	}
	return mg
}

// TLSConfig serves the certificates and answers TLS-ALPN-01 challenges.
func (a *ACME) TLSConfig() *tls.Config {
	c := baseConfig(a.GetCertificate)
	c.NextProtos = append(c.NextProtos, acme.ALPNProto)
	return c
}

// GetCertificate is the certificate for a handshake (tls.Config's).
func (a *ACME) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	return a.cur.Load().m.GetCertificate(hello)
}

// HTTPHandler answers HTTP-01 challenges and redirects every other
// request to HTTPS (GET and HEAD; any other method is refused, since its
// body already crossed the network in clear). Nil unless HTTP01 is set.
func (a *ACME) HTTPHandler() http.Handler {
	if !a.o.HTTP01 {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// autocert checks Host against the domains as it comes: a CA that
		// validates on a port other than 80 (a private CA's test setup)
		// sends it with the port.
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			r = r.Clone(r.Context())
			r.Host = h
		}
		// The current manager's: a challenge of a replacement in progress
		// is found through the cache.
		a.cur.Load().http.ServeHTTP(w, r)
	})
}

// redirect sends a plain HTTP request to the same path over HTTPS, on
// one of the domains: a Host header naming another stays out of the
// redirect.
func (a *ACME) redirect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "Use HTTPS: this address serves only ACME challenges and redirects.", http.StatusBadRequest)
		return
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if !slices.Contains(a.o.Domains, host) {
		host = a.o.Domains[0]
	}
	if p := a.o.HTTPSPort; p != "" && p != "443" {
		host = net.JoinHostPort(host, p)
	}
	http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusMovedPermanently)
}

// Start obtains every domain's certificate now (rather than at the
// first handshake, which would wait for it) and checks them every
// CheckEvery until Stop.
func (a *ACME) Start(ctx context.Context) { a.loop.start(ctx, a.run) }

// Stop ends the checks; a certificate being obtained is given up. Safe
// twice.
func (a *ACME) Stop() { a.loop.stop() }
