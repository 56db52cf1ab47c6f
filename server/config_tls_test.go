package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/internal/testca"
)

// TestValidateTLS: every mistake in the TLS flags is refused naming its
// flag; the public URL defaults to https://NAME (with --addr's port unless
// 443) and must be https; ACME fills its defaults.
func TestValidateTLS(t *testing.T) {
	ca := testca.New(t)
	dir := t.TempDir()
	certFile, keyFile := ca.Issue(t, "kfa.example.com", "127.0.0.1").Write(t, dir)
	other := t.TempDir()
	_, otherKey := ca.Issue(t, "kfa.example.com").Write(t, other)
	wild := t.TempDir()
	wildCert, wildKey := ca.Issue(t, "*.example.com").Write(t, wild)
	ipOnly := t.TempDir()
	ipCert, ipKey := ca.Issue(t, "192.0.2.7").Write(t, ipOnly)
	cnOnly := t.TempDir()
	cnCert, cnKey := ca.IssueCommonName(t, "localhost").Write(t, cnOnly)
	if err := os.WriteFile(filepath.Join(dir, "garbage.pem"), []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		edit      func(c *Config)
		want      string // "" for valid
		publicURL string // when valid
	}{
		{name: "no TLS", edit: func(*Config) {}, publicURL: "http://127.0.0.1:8080"},
		{name: "files", edit: func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = certFile, keyFile },
			publicURL: "https://kfa.example.com:8080"},
		{name: "files on 443", edit: func(c *Config) { c.Addr, c.TLS.CertFile, c.TLS.KeyFile = ":443", certFile, keyFile },
			publicURL: "https://kfa.example.com"},
		{name: "an address only", edit: func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = ipCert, ipKey },
			publicURL: "https://192.0.2.7:8080"},
		{name: "a common name only", edit: func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = cnCert, cnKey },
			publicURL: "https://localhost:8080"},
		{name: "an explicit https public URL", edit: func(c *Config) {
			c.TLS.CertFile, c.TLS.KeyFile, c.PublicURL = certFile, keyFile, "https://kfa.example.org"
		}, publicURL: "https://kfa.example.org"},
		{name: "a wildcard with a public URL", edit: func(c *Config) {
			c.TLS.CertFile, c.TLS.KeyFile, c.PublicURL = wildCert, wildKey, "https://kfa.example.com"
		}, publicURL: "https://kfa.example.com"},
		{name: "a wildcard without", edit: func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = wildCert, wildKey },
			want: "public-url: the certificate in " + wildCert + " names only wildcards (*.example.com)"},
		{name: "cert without key", edit: func(c *Config) { c.TLS.CertFile = certFile }, want: "tls-key: --tls-cert needs"},
		{name: "key without cert", edit: func(c *Config) { c.TLS.KeyFile = keyFile }, want: "tls-cert: --tls-key needs"},
		{name: "a missing file", edit: func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = filepath.Join(dir, "nope.pem"), keyFile },
			want: "tls-cert: " + filepath.Join(dir, "nope.pem")},
		{name: "not PEM", edit: func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = filepath.Join(dir, "garbage.pem"), keyFile },
			want: "tls-cert: "},
		{name: "another certificate's key", edit: func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = certFile, otherKey },
			want: "private key does not match public key"},
		{name: "plain http public URL", edit: func(c *Config) {
			c.TLS.CertFile, c.TLS.KeyFile, c.PublicURL = certFile, keyFile, "http://kfa.example.com"
		}, want: "public-url: http://kfa.example.com is not https"},
		{name: "files and ACME", edit: func(c *Config) {
			c.TLS.CertFile, c.TLS.KeyFile, c.TLS.ACMEDomains = certFile, keyFile, []string{"kfa.example.com"}
		}, want: "acme-domain: --tls-cert/--tls-key and --acme-domain are both set"},
		{name: "ACME", edit: func(c *Config) { c.Addr, c.TLS.ACMEDomains = ":443", []string{"KFA.example.com", "www.example.com"} },
			publicURL: "https://kfa.example.com"},
		{name: "ACME email without a domain", edit: func(c *Config) { c.TLS.ACMEEmail = "ops@example.com" }, want: "acme-email: needs --acme-domain"},
		{name: "ACME directory without a domain", edit: func(c *Config) { c.TLS.ACMEDirectory = "https://ca.example/dir" },
			want: "acme-directory: needs --acme-domain"},
		{name: "ACME HTTP address without a domain", edit: func(c *Config) { c.TLS.ACMEHTTPAddr = ":8081" },
			want: "acme-http-addr: needs --acme-domain"},
		{name: "an IP as domain", edit: func(c *Config) { c.TLS.ACMEDomains = []string{"192.0.2.1"} },
			want: "acme-domain: 192.0.2.1 is an IP address"},
		{name: "a domain twice", edit: func(c *Config) { c.TLS.ACMEDomains = []string{"kfa.example.com", "KFA.example.com."} },
			want: "acme-domain: kfa.example.com is given twice"},
		{name: "a wildcard domain", edit: func(c *Config) { c.TLS.ACMEDomains = []string{"*.example.com"} },
			want: "acme-domain: *.example.com is a wildcard"},
		{name: "a bad email", edit: func(c *Config) {
			c.TLS.ACMEDomains, c.TLS.ACMEEmail = []string{"kfa.example.com"}, "Ops <ops@example.com>"
		},
			want: "acme-email: \"Ops <ops@example.com>\" is not an email address"},
		{name: "an http directory", edit: func(c *Config) {
			c.TLS.ACMEDomains, c.TLS.ACMEDirectory = []string{"kfa.example.com"}, "http://ca.example/dir"
		}, want: "acme-directory: \"http://ca.example/dir\" is not an https URL"},
		{name: "a bad HTTP address", edit: func(c *Config) { c.TLS.ACMEDomains, c.TLS.ACMEHTTPAddr = []string{"kfa.example.com"}, "80" },
			want: "acme-http-addr: \"80\" is not host:port (or off)"},
		{name: "the HTTP address is --addr", edit: func(c *Config) { c.TLS.ACMEDomains, c.TLS.ACMEHTTPAddr = []string{"kfa.example.com"}, c.Addr },
			want: "acme-http-addr: 127.0.0.1:8080 is --addr too"},
		{name: "HTTP-01 off", edit: func(c *Config) { c.TLS.ACMEDomains, c.TLS.ACMEHTTPAddr = []string{"kfa.example.com"}, "off" },
			publicURL: "https://kfa.example.com:8080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Validate() = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if c.PublicURL != tc.publicURL {
				t.Fatalf("public URL %q, want %q", c.PublicURL, tc.publicURL)
			}
		})
	}
	c := DefaultConfig()
	c.TLS.ACMEDomains = []string{"Kfa.Example.com"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.TLS.ACMEDirectory != "https://acme-v02.api.letsencrypt.org/directory" || c.TLS.ACMEHTTPAddr != ":80" || c.TLS.ACMEDomains[0] != "kfa.example.com" {
		t.Fatalf("ACME defaults: directory %q, HTTP address %q, domain %q", c.TLS.ACMEDirectory, c.TLS.ACMEHTTPAddr, c.TLS.ACMEDomains[0])
	}
}
