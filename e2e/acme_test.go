package e2e

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/certs"
	"github.com/kfa-project/kfa/internal/pebbletest"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/store/postgres"
)

// acmeName is the name the ACME tests obtain certificates for; Pebble's
// DNS answers 127.0.0.1 for it.
const acmeName = "acme.kfa.test"

// acmeConfig points cfg at Pebble for acmeName, on addr, checking the
// certificates every 100ms.
func acmeConfig(pb *pebbletest.Pebble, addr, httpAddr string) func(*server.Config) {
	return func(c *server.Config) {
		c.Addr, c.PublicURL = addr, ""
		c.TLS.ACMEDomains = []string{acmeName}
		c.TLS.ACMEDirectory = pb.Directory
		c.TLS.ACMEHTTPClient = pb.Client
		c.TLS.ACMEHTTPAddr = httpAddr
		c.TLS.ACMECheckEvery = 100 * time.Millisecond
	}
}

// nameClient is an HTTPS client that trusts roots and reaches acmeName
// at addr (the name resolves nowhere else), with HTTP/2.
func nameClient(roots *x509.CertPool, addr string) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// waitCert waits until addr serves a certificate for acmeName that roots
// verify, other than not (nil: any), and returns its serial.
func waitCert(t *testing.T, addr string, roots *x509.CertPool, not *big.Int, what string) *big.Int {
	t.Helper()
	var got *big.Int
	waitFor(t, what, func() bool {
		s, err := servedSerial(t, addr, acmeName, roots)
		if err != nil || (not != nil && s.Cmp(not) == 0) {
			return false
		}
		got = s
		return true
	})
	return got
}

// cachedPair is the certificate (DER) and key of acmeName as h's ACME
// cache holds them, once it holds the certificate of serial: autocert
// stores a certificate just after it starts serving it.
func cachedPair(t *testing.T, h *harness, serial *big.Int) ([]byte, crypto.Signer) {
	t.Helper()
	var der []byte
	var key crypto.Signer
	waitFor(t, "the cache to hold serial "+serial.String(), func() bool {
		der, key = readCache(t, h)
		return der != nil && key != nil && mustParse(t, der).SerialNumber.Cmp(serial) == 0
	})
	return der, key
}

// readCache reads acmeName's entry in h's ACME cache; nil if none.
func readCache(t *testing.T, h *harness) (der []byte, key crypto.Signer) {
	t.Helper()
	var b []byte
	var err error
	name := certs.CacheKey(h.cfg.TLS.ACMEDirectory, acmeName)
	if pg, ok := h.srv.Core().Store.(*postgres.DB); ok {
		b, err = pg.TLSCache().Get(context.Background(), name)
	} else {
		b, err = os.ReadFile(filepath.Join(h.cfg.DataDir, "acme", name))
	}
	if err != nil {
		return nil, nil
	}
	for blk, rest := pem.Decode(b); blk != nil; blk, rest = pem.Decode(rest) {
		switch {
		case blk.Type == "CERTIFICATE" && der == nil:
			der = blk.Bytes
		case strings.Contains(blk.Type, "PRIVATE KEY"):
			k, err := x509.ParseECPrivateKey(blk.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			key = k
		}
	}
	return der, key
}

// acmeSetup is a server on a port of its own with its certificate from a
// Pebble of its own, obtained through TLS-ALPN-01 (no HTTP-01 listener),
// and the gRPC binding on.
type acmeSetup struct {
	h      *harness
	pb     *pebbletest.Pebble
	addr   string
	port   int
	roots  *x509.CertPool // trusts what pb issues
	serial *big.Int       // of the first certificate
}

func startACME(t *testing.T) acmeSetup {
	t.Helper()
	s := acmeSetup{}
	s.addr, s.port = pebbletest.FreeAddr(t)
	s.pb = pebbletest.Start(t, pebbletest.Options{TLSPort: s.port})
	s.h = start(t, func(c *server.Config) {
		acmeConfig(s.pb, s.addr, "off")(c)
		withGRPC(c)
	})
	s.roots = s.pb.Roots(t)
	s.serial = waitCert(t, s.addr, s.roots, nil, "the certificate from the CA")
	return s
}

// TestACMETLSALPN: a server that cannot bind port 80 (--acme-http-addr
// off) obtains its certificate from the CA through TLS-ALPN-01 on --addr
// as it starts, serves it over HTTP/2 and to gRPC over TLS (the card's
// gRPC interface names the domain), keeps it in <data>/acme (0700,
// files 0600), and serves it again after a restart without asking the
// CA; restarted on another CA's directory (staging, then production), it
// obtains that CA's certificate rather than serve the first's.
func TestACMETLSALPN(t *testing.T) {
	t.Parallel() // each has its own CA and ports, and mostly waits on them
	s := startACME(t)
	h, pb, addr, port, roots, serial := s.h, s.pb, s.addr, s.port, s.roots, s.serial
	if cfg := h.cfg; cfg.Validate() != nil || cfg.PublicURL != fmt.Sprintf("https://%s:%d", acmeName, port) {
		t.Fatalf("public URL %s, want https://%s:%d", cfg.PublicURL, acmeName, port)
	}
	hc := nameClient(roots, addr)
	resp, err := hc.Get("https://" + acmeName + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 || resp.Header.Get("Strict-Transport-Security") == "" {
		t.Fatalf("healthz over the CA's certificate: %d %s %v", resp.StatusCode, resp.Proto, resp.Header)
	}
	if h.srv.ACMEHTTPAddr() != "" {
		t.Fatalf("an HTTP-01 listener on %s with --acme-http-addr off", h.srv.ACMEHTTPAddr())
	}
	checkGRPCOverACME(t, h, hc, roots, serial)
	if n := pb.Issued(); n != 1 {
		t.Fatalf("pebble issued %d certificates, want 1", n)
	}
	// A handshake for any other name, or none, is refused without a word
	// to the CA: a flood of made-up names costs the CA nothing.
	orders := pb.Orders()
	for _, name := range []string{"other.kfa.test", "127.0.0.1", ""} {
		c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: name, InsecureSkipVerify: true})
		if err == nil {
			c.Close()
			t.Fatalf("a handshake for %q was answered", name)
		}
	}
	if n := pb.Orders(); n != orders {
		t.Fatalf("handshakes for other names made %d orders at the CA", n-orders)
	}
	if onPostgres() {
		return // the cache is the database
	}
	cache := filepath.Join(h.cfg.DataDir, "acme")
	checkMode(t, cache, 0o700)
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) < 2 {
		t.Fatalf("the cache holds %v (%v), want the account key and the certificate", entries, err)
	}
	for _, e := range entries {
		checkMode(t, filepath.Join(cache, e.Name()), 0o600)
	}
	h.stop()
	h2 := startWith(t, h.cfg)
	if got := waitCert(t, addr, roots, nil, "the cached certificate after a restart"); got.Cmp(serial) != 0 {
		t.Fatalf("after a restart serial %s, want the cached %s", got, serial)
	}
	if n := pb.Issued(); n != 1 {
		t.Fatalf("after a restart pebble issued %d certificates, want still 1", n)
	}
	h2.stop()

	other := pebbletest.Start(t, pebbletest.Options{TLSPort: port})
	h3 := start(t, func(c *server.Config) {
		acmeConfig(other, addr, "off")(c)
		c.DataDir = h.cfg.DataDir
	})
	waitCert(t, addr, other.Roots(t), nil, "the other CA's certificate")
	if n := other.Issued(); n != 1 {
		t.Fatalf("the other CA issued %d certificates, want 1", n)
	}
	h3.stop()
}

// checkGRPCOverACME: the gRPC listener serves the CA's certificate (of
// serial) for acmeName, answers a client that trusts the CA, and the
// card's gRPC interface names acmeName with the gRPC port.
func checkGRPCOverACME(t *testing.T, h *harness, hc *http.Client, roots *x509.CertPool, serial *big.Int) {
	t.Helper()
	gaddr := h.srv.GRPCAddr()
	if got, err := servedSerial(t, gaddr, acmeName, roots); err != nil || got.Cmp(serial) != 0 {
		t.Fatalf("gRPC listener: serial %v (%v), want the CA's %s", got, err, serial)
	}
	grpcTLSHealthy(t, gaddr, &tls.Config{RootCAs: roots, ServerName: acmeName})
	resp, err := hc.Get("https://" + acmeName + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card struct {
		SupportedInterfaces []struct{ URL, ProtocolBinding string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	_, gport, _ := net.SplitHostPort(gaddr)
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == "GRPC" && i.URL == net.JoinHostPort(acmeName, gport) {
			return
		}
	}
	t.Fatalf("the card's interfaces %+v name no gRPC one at %s", card.SupportedInterfaces, net.JoinHostPort(acmeName, gport))
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Fatalf("%s has mode %o, want %o", path, fi.Mode().Perm(), want)
	}
}

// TestACMEHTTP01: with TLS-ALPN-01 unreachable, the certificate comes
// through HTTP-01 on --acme-http-addr, which redirects every other GET
// to HTTPS on one of the domains and refuses other methods.
func TestACMEHTTP01(t *testing.T) {
	t.Parallel() // each has its own CA and ports, and mostly waits on them
	addr, _ := pebbletest.FreeAddr(t)
	httpAddr, httpPort := pebbletest.FreeAddr(t)
	pb := pebbletest.Start(t, pebbletest.Options{HTTPPort: httpPort}) // TLS-ALPN-01: a port nothing listens on
	h := start(t, acmeConfig(pb, addr, httpAddr))
	waitCert(t, addr, pb.Roots(t), nil, "the certificate through HTTP-01")
	if h.srv.ACMEHTTPAddr() != httpAddr {
		t.Fatalf("HTTP-01 listener on %q, want %s", h.srv.ACMEHTTPAddr(), httpAddr)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", "http://"+httpAddr+"/discussions?q=tls", nil)
	req.Host = acmeName
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, port, _ := net.SplitHostPort(addr)
	if want := "https://" + acmeName + ":" + port + "/discussions?q=tls"; resp.StatusCode != 301 || resp.Header.Get("Location") != want {
		t.Fatalf("plain HTTP GET: %d %q, want 301 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	resp, err = http.Post("http://"+httpAddr+"/a2a/v1/message:send", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("plain HTTP POST: %d, want 400", resp.StatusCode)
	}
}
