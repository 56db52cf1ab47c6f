package server

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kfa-project/kfa/certs"
)

// TLSOptions make the public listener serve HTTPS itself (HTTP/2 and
// HTTP/1.1), with a key pair from files or certificates from an ACME CA.
// Empty, it serves plain HTTP (behind a TLS-terminating proxy).
type TLSOptions struct {
	// CertFile and KeyFile are a PEM certificate chain and its key. They
	// are read again every ReloadEvery: a renewed pair is served from the
	// next handshake on; a pair that does not parse or match (half
	// written) never replaces the one served.
	CertFile, KeyFile string
	// ReloadEvery is how often the files are read again; default
	// certs.DefaultReloadEvery.
	ReloadEvery time.Duration

	// ACMEDomains, when set, obtain certificates for these names from an
	// ACME CA (autocert), kept in <DataDir>/acme or, on PostgreSQL, in the
	// database, where every process shares them.
	ACMEDomains []string
	// ACMEEmail is the ACME account's contact; optional.
	ACMEEmail string
	// ACMEDirectory is the CA's directory URL; default Let's Encrypt's
	// production (certs.LetsEncrypt).
	ACMEDirectory string
	// ACMEHTTPAddr answers HTTP-01 challenges and redirects every other
	// request to HTTPS; default ":80", "off" for none (TLS-ALPN-01 on
	// Addr still works).
	ACMEHTTPAddr string
	// ACMEHTTPClient talks to the CA; nil: the system roots, with
	// SSL_CERT_FILE and SSL_CERT_DIR (tests, embedding).
	ACMEHTTPClient *http.Client
	// ACMECheckEvery is how often the certificates are checked against
	// the cache and the CA's renewal information; default
	// certs.DefaultCheckEvery.
	ACMECheckEvery time.Duration
}

// On reports whether the public listener serves HTTPS.
func (t TLSOptions) On() bool { return t.CertFile != "" || t.KeyFile != "" || len(t.ACMEDomains) > 0 }

// acmeHTTPOff turns the HTTP-01 listener off.
const acmeHTTPOff = "off"

// validateTLS checks the TLS options, naming the flag of the first
// problem, and fills the defaults that depend on them: the public URL
// (https://NAME) and the ACME directory and HTTP address.
func (c *Config) validateTLS() error {
	t := &c.TLS
	files, acme := t.CertFile != "" || t.KeyFile != "", len(t.ACMEDomains) > 0
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		return errors.New("tls-key: --tls-cert needs the file of its private key, --tls-key")
	case t.KeyFile != "" && t.CertFile == "":
		return errors.New("tls-cert: --tls-key needs the file of its certificate, --tls-cert")
	case files && acme:
		return errors.New("acme-domain: --tls-cert/--tls-key and --acme-domain are both set; serve either the files' certificate or the CA's")
	case !acme && t.ACMEEmail != "":
		return errors.New("acme-email: needs --acme-domain")
	case !acme && t.ACMEDirectory != "":
		return errors.New("acme-directory: needs --acme-domain")
	case !acme && t.ACMEHTTPAddr != "":
		return errors.New("acme-http-addr: needs --acme-domain")
	case t.ReloadEvery < 0 || t.ACMECheckEvery < 0:
		return errors.New("tls: reload and check periods must not be negative")
	}
	var name string
	switch {
	case files:
		cert, err := certs.ReadPair(t.CertFile, t.KeyFile)
		if err != nil {
			return fmt.Errorf("tls-cert: %s with --tls-key %s: %w", t.CertFile, t.KeyFile, err)
		}
		if name = certName(cert.Leaf, c.Addr); name == "" && c.PublicURL == "" {
			return fmt.Errorf("public-url: the certificate in %s names only wildcards (%s); set --public-url to kfa's https URL", t.CertFile, strings.Join(cert.Leaf.DNSNames, ", "))
		}
	case acme:
		if err := t.validateACME(c.Addr); err != nil {
			return err
		}
		name = t.ACMEDomains[0]
	default:
		return nil
	}
	if c.PublicURL == "" {
		c.PublicURL = "https://" + withPort(name, c.Addr)
	}
	if u, err := url.Parse(c.PublicURL); err == nil && u.Scheme != "https" {
		return fmt.Errorf("public-url: %s is not https, but kfa serves HTTPS (--tls-cert or --acme-domain): links, OAuth audiences and Secure cookies need the https URL", c.PublicURL)
	}
	return nil
}

// validateACME checks the ACME options and fills their defaults.
func (t *TLSOptions) validateACME(addr string) error {
	// A new slice: a copy of the Config (the server's) may share the old.
	domains := make([]string, 0, len(t.ACMEDomains))
	for _, d := range t.ACMEDomains {
		n, err := certs.Domain(d)
		if err != nil {
			return fmt.Errorf("acme-domain: %w", err)
		}
		if slices.Contains(domains, n) {
			return fmt.Errorf("acme-domain: %s is given twice", n)
		}
		domains = append(domains, n)
	}
	t.ACMEDomains = domains
	if t.ACMEEmail != "" {
		a, err := mail.ParseAddress(t.ACMEEmail)
		if err != nil || a.Address != t.ACMEEmail {
			return fmt.Errorf("acme-email: %q is not an email address such as ops@example.com", t.ACMEEmail)
		}
	}
	if t.ACMEDirectory == "" {
		t.ACMEDirectory = certs.LetsEncrypt
	}
	if u, err := url.Parse(t.ACMEDirectory); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("acme-directory: %q is not an https URL (the CA's directory, e.g. %s)", t.ACMEDirectory, certs.LetsEncrypt)
	}
	if t.ACMEHTTPAddr == "" {
		t.ACMEHTTPAddr = ":80"
	}
	if t.ACMEHTTPAddr != acmeHTTPOff {
		if _, _, err := net.SplitHostPort(t.ACMEHTTPAddr); err != nil {
			return fmt.Errorf("acme-http-addr: %q is not host:port (or off): %w", t.ACMEHTTPAddr, err)
		}
		if t.ACMEHTTPAddr == addr {
			return fmt.Errorf("acme-http-addr: %s is --addr too; HTTP-01 needs its own port (80)", addr)
		}
	}
	return nil
}

// certName is the name a certificate from files serves: its first DNS
// name that is no wildcard, else its first address, else its common name
// (the clients that still accept a certificate without subjectAltName,
// curl and Node, compare the host with it), else --addr's host; "" when
// it names wildcards only.
func certName(leaf *x509.Certificate, addr string) string {
	dns, ips := leaf.DNSNames, leaf.IPAddresses
	for _, d := range dns {
		if !strings.HasPrefix(d, "*.") {
			return d
		}
	}
	switch {
	case len(dns) > 0:
		return ""
	case len(ips) > 0:
		if ips[0].To4() == nil {
			return "[" + ips[0].String() + "]"
		}
		return ips[0].String()
	case leaf.Subject.CommonName != "" && !strings.HasPrefix(leaf.Subject.CommonName, "*."):
		return leaf.Subject.CommonName
	}
	host, _, _ := net.SplitHostPort(addr)
	if host == "" || net.ParseIP(host).IsUnspecified() {
		return "localhost"
	}
	return host
}

// withPort adds --addr's port to name unless it is 443, HTTPS's.
func withPort(name, addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	if port == "" || port == "443" {
		return name
	}
	return name + ":" + port
}
