package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/testca"
	"github.com/kfa-project/kfa/server"
)

// httpsClient trusts roots alone and speaks HTTP/2 when the server does.
func httpsClient(roots *x509.CertPool) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
	}}
}

// servedSerial is the serial of the certificate addr serves for name,
// verified against roots.
func servedSerial(t *testing.T, addr, name string, roots *x509.CertPool) (*big.Int, error) {
	t.Helper()
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: &tls.Config{RootCAs: roots, ServerName: name}}
	c, err := d.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber, nil
}

// waitServed waits until addr serves the certificate of serial for name.
func waitServed(t *testing.T, addr, name string, roots *x509.CertPool, serial *big.Int, what string) {
	t.Helper()
	waitFor(t, what, func() bool {
		got, err := servedSerial(t, addr, name, roots)
		return err == nil && got.Cmp(serial) == 0
	})
}

// startHTTPS starts a server serving HTTPS with a certificate for names
// from a CA of its own, in certDir; mutate may change the configuration
// further.
func startHTTPS(t *testing.T, names []string, mutate func(*server.Config)) (h *harness, ca *testca.CA, certDir string) {
	t.Helper()
	ca, certDir = testca.New(t), t.TempDir()
	certFile, keyFile := ca.Issue(t, names...).Write(t, certDir)
	h = start(t, func(c *server.Config) {
		c.PublicURL = ""
		c.TLS.CertFile, c.TLS.KeyFile = certFile, keyFile
		if mutate != nil {
			mutate(c)
		}
	})
	return h, ca, certDir
}

// tlsAgent creates an agent and a client of it that trusts roots.
func tlsAgent(h *harness, hc *http.Client, name string, scopes ...string) (api.Agent, *client.Client) {
	h.t.Helper()
	a, _ := h.agent(name, scopes...)
	return a, client.New(h.url, client.WithToken(a.Token), client.WithHTTPClient(hc))
}

// TestHTTPSFromFiles: kfa serve --tls-cert/--tls-key serves HTTPS with
// HTTP/2 and HSTS to a client that trusts the CA (and only to one that
// does); a renewed pair written over the files is served without a
// restart; a half-written pair never replaces the good one.
func TestHTTPSFromFiles(t *testing.T) {
	h, ca, dir := startHTTPS(t, []string{"kfa.test", "127.0.0.1"}, func(c *server.Config) { c.TLS.ReloadEvery = 20 * time.Millisecond })
	if !strings.HasPrefix(h.url, "https://127.0.0.1:") {
		t.Fatalf("server URL %s, want https", h.url)
	}
	hc := httpsClient(ca.Pool)
	resp, err := hc.Get(h.url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("agent card over HTTPS: %d %s", resp.StatusCode, resp.Proto)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Fatalf("Strict-Transport-Security %q", got)
	}
	// The public URL defaults to https://NAME: the card says so.
	if !strings.Contains(string(body), `"https://kfa.test:`) {
		t.Fatalf("the card names no https://kfa.test URL:\n%s", body)
	}
	// An agent works over it, HTTP/1.1 too.
	_, ac := tlsAgent(h, httpsClient(ca.Pool), "alice")
	h.ask(ac, "tls-1", "Does an ask travel over HTTPS?")
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
	if resp, err := h1.Get(h.url + "/healthz"); err != nil || resp.ProtoMajor != 1 || resp.Header.Get("Strict-Transport-Security") == "" {
		t.Fatalf("HTTP/1.1 over TLS: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// A client that does not trust the CA is refused the handshake.
	if _, err := http.Get(h.url + "/healthz"); err == nil || !errors.As(err, new(*tls.CertificateVerificationError)) {
		t.Fatalf("a client without the CA: %v, want a certificate verification error", err)
	}
	// Plain HTTP to the HTTPS port gets Go's 400, nothing served.
	if resp, err := http.Get("http://" + h.srv.Addr() + "/healthz"); err != nil || resp.StatusCode != 400 {
		t.Fatalf("plain HTTP to the HTTPS port: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	addr := h.srv.Addr()
	// Renewal: the new pair written over the files, as certbot's deploy
	// hook or a Kubernetes secret would.
	second := ca.Issue(t, "kfa.test", "127.0.0.1")
	second.Write(t, dir)
	waitServed(t, addr, "kfa.test", ca.Pool, second.Leaf.SerialNumber, "the renewed pair to be served")

	// Half written: the certificate of a third pair beside the key of the
	// second. The reloader logs it, and keeps serving the second.
	third := ca.Issue(t, "kfa.test", "127.0.0.1")
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), third.Cert, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the half-written pair to be logged", func() bool {
		return strings.Contains(h.logBuf.String(), "the certificate files hold no good pair")
	})
	if got, err := servedSerial(t, addr, "kfa.test", ca.Pool); err != nil || got.Cmp(second.Leaf.SerialNumber) != 0 {
		t.Fatalf("after a half-written pair: serial %v (%v), want the second's %s", got, err, second.Leaf.SerialNumber)
	}
	// The key follows: the third pair is served.
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), third.Key, 0o600); err != nil {
		t.Fatal(err)
	}
	waitServed(t, addr, "kfa.test", ca.Pool, third.Leaf.SerialNumber, "the third pair once whole")
}

// TestHTTPSCookiesSecure: over HTTPS the web view's CSRF and session
// cookies are Secure, and a browser that keeps them signs in and stays
// signed in.
func TestHTTPSCookiesSecure(t *testing.T) {
	h, ca, _ := startHTTPS(t, []string{"127.0.0.1"}, nil)
	reader, _ := h.agent("reader", "read")
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := httpsClient(ca.Pool)
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	b := &browser{t: t, base: h.url, c: hc}
	form := b.get("/login")
	for _, c := range form.header.Values("Set-Cookie") {
		if !strings.Contains(c, "; Secure") {
			t.Fatalf("cookie without Secure over HTTPS: %s", c)
		}
	}
	p := b.post("/login", url.Values{"csrf": {form.csrf(t)}, "token": {reader.Token}})
	cookies := p.header.Values("Set-Cookie")
	if p.status != http.StatusSeeOther || len(cookies) == 0 {
		t.Fatalf("sign in over HTTPS: %d %v", p.status, p.header)
	}
	for _, c := range cookies {
		if !strings.Contains(c, "; HttpOnly; Secure; SameSite=Lax") {
			t.Fatalf("cookie without Secure over HTTPS: %s", c)
		}
	}
	if who := b.get("/").signedInAs(); who != "reader" {
		t.Fatalf("signed in as %q after a sign-in over HTTPS, want reader", who)
	}
}

// TestHTTPSStreamOverHTTP2: an SSE stream over HTTP/2 outlives
// --write-timeout (streams are excepted from it on HTTP/2 as on
// HTTP/1.1), keeps beating, and carries the reply.
func TestHTTPSStreamOverHTTP2(t *testing.T) {
	h, ca, _ := startHTTPS(t, []string{"127.0.0.1"}, func(c *server.Config) {
		c.WriteTimeout = 300 * time.Millisecond
		c.StreamHeartbeat = 100 * time.Millisecond
	})
	hc := httpsClient(ca.Pool)
	alice, ac := tlsAgent(h, hc, "alice")
	_, bc := tlsAgent(h, hc, "bob")
	tk := h.ask(ac, "h2-1", "Does a stream over HTTP/2 outlive the write timeout?")
	s := openSSE(t, hc, "GET", h.url+"/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(alice.Token), "")
	if s.resp.ProtoMajor != 2 {
		t.Fatalf("the stream runs over %s, want HTTP/2", s.resp.Proto)
	}
	decodeEvent(t, s.next(t))
	for range 6 { // 600ms of heartbeats: twice the write timeout
		select {
		case <-s.comments:
		case <-time.After(20 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	if _, err := bc.Reply(context.Background(), discussionOf(t, tk), "Yes."); err != nil {
		t.Fatal(err)
	}
	if art := decodeEvent(t, s.next(t)); art.ArtifactUpdate == nil {
		t.Fatalf("after the write timeout the stream carried %+v, want the reply", art)
	}
}
