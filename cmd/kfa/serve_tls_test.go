package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pebbletest"
	"github.com/kfa-project/kfa/internal/testca"
)

// TestServeTLSFlags: kfa serve refuses every mistake in its TLS flags
// and variables before it starts anything, naming the flag.
func TestServeTLSFlags(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := testca.New(t).Issue(t, "kfa.example.com").Write(t, dir)
	run := func(vars map[string]string, args ...string) result {
		var out, errb bytes.Buffer
		e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
		code := runEnv(context.Background(), e, append([]string{"serve", "--data", filepath.Join(dir, "data")}, args...))
		return result{code: code, stdout: out.String(), stderr: errb.String()}
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"a certificate without its key", nil, []string{"--tls-cert", certFile}, "tls-key: --tls-cert needs"},
		{"a key from the environment without its certificate", map[string]string{"KFA_TLS_KEY": keyFile}, nil, "tls-cert: --tls-key needs"},
		{"files and ACME", map[string]string{"KFA_TLS_CERT": certFile, "KFA_TLS_KEY": keyFile}, []string{"--acme-domain", "kfa.example.com"},
			"--tls-cert/--tls-key and --acme-domain are both set"},
		{"an IP address", nil, []string{"--acme-domain", "kfa.example.com,192.0.2.1"}, "acme-domain: 192.0.2.1 is an IP address"},
		{"a name repeated: each --acme-domain adds one", nil, []string{"--acme-domain", "kfa.example.com", "--acme-domain", "www.example.com,KFA.example.com"},
			"acme-domain: kfa.example.com is given twice"},
		{"ACME email without a domain", map[string]string{"KFA_ACME_EMAIL": "ops@example.com"}, nil, "acme-email: needs --acme-domain"},
		{"a directory in plain http", map[string]string{"KFA_ACME_DOMAIN": "kfa.example.com"}, []string{"--acme-directory", "http://ca.internal/dir"},
			"acme-directory: \"http://ca.internal/dir\" is not an https URL"},
		{"an http public URL", nil, []string{"--tls-cert", certFile, "--tls-key", keyFile, "--public-url", "http://kfa.example.com"},
			"public-url: http://kfa.example.com is not https"},
	} {
		r := run(tc.vars, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 and %q: %s", tc.name, tc.want, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Fatalf("a refused start made the data directory: %v", err)
	}
}

// TestServeACMEPrivateCA: the kfa binary obtains its certificate from a
// private ACME CA (Pebble) whose own TLS certificate it trusts through
// SSL_CERT_FILE, as any Go program does; without it, the CA's
// certificate is checked against the system roots and refused.
func TestServeACMEPrivateCA(t *testing.T) {
	bin := buildKFA(t)
	addr, port := pebbletest.FreeAddr(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: port})
	args := []string{"serve", "--addr", addr, "--acme-domain", "acme.kfa.test", "--acme-directory", pb.Directory,
		"--acme-http-addr", "off", "--log-format", "json", "--admin-socket", "off"}

	// Without SSL_CERT_FILE: the system roots do not know Pebble's CA.
	untrusted := startProc(t, bin, append(args, "--data", filepath.Join(t.TempDir(), "data")))
	untrusted.waitLog(t, "certificate signed by unknown authority")
	untrusted.stop(t)

	trusted := startProc(t, bin, append(args, "--data", filepath.Join(t.TempDir(), "data")), "SSL_CERT_FILE="+pb.MinicaFile)
	trusted.waitLog(t, "tls: certificate obtained or loaded")
	roots := pb.Roots(t)
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "acme.kfa.test", NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	c.Close()
	trusted.stop(t)
}

// proc is a kfa serve process whose log a test reads.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan error
}

// startProc runs bin with args, in the test's environment without any
// SSL_CERT_FILE of its own, plus vars.
func startProc(t *testing.T, bin string, args []string, vars ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "SSL_CERT_FILE=") {
			cmd.Env = append(cmd.Env, v)
		}
	}
	cmd.Env = append(cmd.Env, vars...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1024), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // a test reads what it waits for; drop the rest
			}
		}
		close(p.lines)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// waitLog waits for a log line holding what.
func (p *proc) waitLog(t *testing.T, what string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("kfa exited before logging %q", what)
			}
			if strings.Contains(l, what) {
				return
			}
		case <-deadline:
			t.Fatalf("kfa did not log %q within a minute", what)
		}
	}
}

// stop sends SIGTERM and wants a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		for range p.lines {
		}
	}()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("kfa serve exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("kfa serve did not stop within 30s of SIGTERM")
	}
}
