// Package pebbletest runs Let's Encrypt's test CA, Pebble, for tests of
// kfa's ACME client: a real ACME server on loopback that validates
// HTTP-01 and TLS-ALPN-01 challenges by connecting to the ports a test
// names, answers renewal information (ARI), revokes, and never reaches
// the internet. Pebble's validation resolves every name to 127.0.0.1
// through a DNS server in the test process.
//
// Pebble is a tool dependency of the module (go.mod's tool directive),
// built once per test process by internal/testbin; its own TLS uses the
// test certificates in its module, whose CA (MinicaFile) the ACME client
// must trust. It is for tests only.
package pebbletest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/acme"

	"github.com/kfa-project/kfa/internal/testbin"
)

// pkg is Pebble's command.
const pkg = "github.com/letsencrypt/pebble/v2/cmd/pebble"

// Options configure Start.
type Options struct {
	// HTTPPort and TLSPort are where Pebble validates HTTP-01 and
	// TLS-ALPN-01 challenges (on 127.0.0.1); 0 for a port nothing
	// listens on, so that challenge type fails.
	HTTPPort, TLSPort int
	// Validity is how long the certificates it issues last; 90 days when
	// 0.
	Validity time.Duration
}

// Pebble is a running Pebble.
type Pebble struct {
	// Directory is the ACME directory URL.
	Directory string
	// MinicaFile is the PEM file of the CA of Pebble's own TLS
	// certificate (what SSL_CERT_FILE names for a kfa process).
	MinicaFile string
	// Client is an HTTP client that trusts Pebble's TLS (what kfa's ACME
	// client is given in-process).
	Client *http.Client

	mgmt string
	logs *buffer
}

// Start builds Pebble (once per test process), starts it, and stops it
// when t ends.
func Start(t testing.TB, o Options) *Pebble {
	t.Helper()
	bin := testbin.Command(t, pkg)
	dir := moduleDir(t)
	minica := filepath.Join(dir, "test", "certs", "pebble.minica.pem")
	roots := x509.NewCertPool()
	b, err := os.ReadFile(minica)
	if err != nil || !roots.AppendCertsFromPEM(b) {
		t.Fatalf("pebble's test CA %s: %v", minica, err)
	}
	dns := startDNS(t)
	validity := o.Validity
	if validity == 0 {
		validity = 90 * 24 * time.Hour
	}
	listen, mgmt := freePort(t), freePort(t)
	for _, p := range []*int{&o.HTTPPort, &o.TLSPort} {
		if *p == 0 {
			*p = freePort(t) // nothing will listen there
		}
	}
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":                  fmt.Sprintf("127.0.0.1:%d", listen),
		"managementListenAddress":        fmt.Sprintf("127.0.0.1:%d", mgmt),
		"certificate":                    filepath.Join(dir, "test", "certs", "localhost", "cert.pem"),
		"privateKey":                     filepath.Join(dir, "test", "certs", "localhost", "key.pem"),
		"httpPort":                       o.HTTPPort,
		"tlsPort":                        o.TLSPort,
		"ocspResponderURL":               "",
		"externalAccountBindingRequired": false,
		"retryAfter":                     map[string]int{"authz": 1, "order": 1},
		"keyAlgorithm":                   "ecdsa",
		"profiles": map[string]any{"default": map[string]any{
			"description": "kfa's tests", "validityPeriod": int(validity / time.Second),
		}},
	}}
	cfgFile := filepath.Join(t.TempDir(), "pebble.json")
	cb, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgFile, cb, 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &buffer{}
	cmd := exec.Command(bin, "-config", cfgFile, "-dnsserver", dns)
	cmd.Env = append(os.Environ(),
		"PEBBLE_VA_NOSLEEP=1",      // validate at once, not after up to 15s
		"PEBBLE_WFE_NONCEREJECT=0", // no random badNonce answers
		"PEBBLE_AUTHZREUSE=0",      // every order validates its challenges
	)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("pebble's log:\n%s", logs.String())
		}
	})
	p := &Pebble{
		Directory:  fmt.Sprintf("https://127.0.0.1:%d/dir", listen),
		MinicaFile: minica,
		Client:     &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}},
		mgmt:       fmt.Sprintf("https://127.0.0.1:%d", mgmt),
		logs:       logs,
	}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := p.Client.Get(p.Directory)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-exited:
			t.Fatalf("pebble exited:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble did not answer within a minute: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Logs is what Pebble printed so far.
func (p *Pebble) Logs() string { return p.logs.String() }

// Roots trusts the root that signs the certificates Pebble issues
// (Pebble makes a new one at every start).
func (p *Pebble) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	b := p.mgmtGet(t, "/roots/0")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("pebble's root: not PEM: %s", b)
	}
	return pool
}

// Status is the certificate's status at Pebble: "Valid" or "Revoked".
func (p *Pebble) Status(t testing.TB, serial *big.Int) string {
	t.Helper()
	var st struct{ Status string }
	if err := json.Unmarshal(p.mgmtGet(t, "/cert-status-by-serial/"+serial.Text(16)), &st); err != nil {
		t.Fatal(err)
	}
	return st.Status
}

// Revoke revokes the certificate at Pebble, as its key's holder may
// (RFC 8555 §7.6), for key compromise.
func (p *Pebble) Revoke(t testing.TB, certDER []byte, key crypto.Signer) {
	t.Helper()
	c := &acme.Client{DirectoryURL: p.Directory, HTTPClient: p.Client}
	if err := c.RevokeCert(context.Background(), key, certDER, acme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revoke: %v", err)
	}
}

// RenewNow makes Pebble's renewal information for the certificate say
// "renew now" (a window that ended an hour ago), as a CA does when it
// must replace certificates early.
func (p *Pebble) RenewNow(t testing.TB, certDER []byte) {
	t.Helper()
	now := time.Now().UTC()
	window, _ := json.Marshal(map[string]any{"suggestedWindow": map[string]string{
		"start": now.Add(-2 * time.Hour).Format(time.RFC3339), "end": now.Add(-time.Hour).Format(time.RFC3339),
	}})
	body, _ := json.Marshal(map[string]string{
		"Certificate": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})),
		"ARIResponse": string(window),
	})
	resp, err := p.Client.Post(p.mgmt+"/set-renewal-info/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("set-renewal-info: %s %s", resp.Status, b)
	}
}

func (p *Pebble) mgmtGet(t testing.TB, path string) []byte {
	t.Helper()
	resp, err := p.Client.Get(p.mgmt + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("pebble %s: %s %v %s", path, resp.Status, err, b)
	}
	return b
}

// moduleDir is where the Go tool keeps Pebble's module (its test
// certificates).
func moduleDir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/letsencrypt/pebble/v2").Output()
	if err != nil {
		t.Fatalf("go list pebble's module: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// freePort is a loopback port free now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// FreeAddr is a loopback address (127.0.0.1:PORT) free now, for a server
// whose port Pebble must know before it starts.
func FreeAddr(t testing.TB) (string, int) {
	t.Helper()
	p := freePort(t)
	return fmt.Sprintf("127.0.0.1:%d", p), p
}

// buffer is a bytes.Buffer safe for a process's output and a reader.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Issued is how many certificates Pebble has issued.
func (p *Pebble) Issued() int { return strings.Count(p.logs.String(), "Issued certificate serial") }

// Orders is how many orders Pebble has taken (one per attempt to obtain
// a certificate).
func (p *Pebble) Orders() int { return strings.Count(p.logs.String(), "Added order") }
