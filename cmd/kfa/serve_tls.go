package main

import (
	"flag"
	"strings"

	"github.com/kfa-project/kfa/certs"
	"github.com/kfa-project/kfa/server"
)

// serveTLSFlags binds the HTTPS flags of kfa serve to t.
func serveTLSFlags(fs *flag.FlagSet, t *server.TLSOptions) {
	fs.StringVar(&t.CertFile, "tls-cert", t.CertFile, "serve HTTPS (and HTTP/2) on --addr with this PEM certificate chain `file`, read again when it changes; needs --tls-key")
	fs.StringVar(&t.KeyFile, "tls-key", t.KeyFile, "the PEM private key `file` of --tls-cert")
	fs.Func("acme-domain", "serve HTTPS on --addr with certificates for this `name` from an ACME CA (Let's Encrypt by default), obtained and renewed on their own; by using it you accept the CA's terms (repeat the flag, or separate with commas, for several names)", appendList(&t.ACMEDomains))
	fs.StringVar(&t.ACMEEmail, "acme-email", t.ACMEEmail, "contact `address` of the ACME account, for the CA's expiry and incident mail")
	fs.StringVar(&t.ACMEDirectory, "acme-directory", t.ACMEDirectory, "the ACME CA's directory `URL` (default "+certs.LetsEncrypt+"; Let's Encrypt's staging, or a private CA, whose root SSL_CERT_FILE can name)")
	fs.StringVar(&t.ACMEHTTPAddr, "acme-http-addr", t.ACMEHTTPAddr, "answer ACME HTTP-01 challenges on this `address` and redirect every other request to HTTPS (default :80; off for none: TLS-ALPN-01 on --addr still works)")
}

// privilegedHint says how to bind a port under 1024 (443, 80) without
// running kfa as root, and what works without port 80.
func privilegedHint(e env, err error) string {
	hint := "Ports under 1024 need root or the capability to bind them: grant it to the binary once with " +
		"'sudo setcap cap_net_bind_service=+ep $(command -v " + e.name() + ")' (or AmbientCapabilities=CAP_NET_BIND_SERVICE in a systemd unit)"
	if strings.Contains(err.Error(), "acme-http-addr") {
		hint += ", or run without port 80: --acme-http-addr off (certificates then come through TLS-ALPN-01 on --addr, which must be reachable on port 443)"
	}
	return hint + ". Nothing was written to the data directory."
}

// appendList is a flag that adds its comma-separated values to *dst,
// each time it is given.
func appendList(dst *[]string) func(string) error {
	return func(v string) error {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				*dst = append(*dst, e)
			}
		}
		return nil
	}
}
