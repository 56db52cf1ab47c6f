package certs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/certs"
	"github.com/kfa-project/kfa/internal/testca"
)

// TestPairReload: a renewed pair is served after a reload; a pair half
// written (the new certificate with the old key, the other way round, a
// truncated file, a file missing) never replaces the good one, and is
// tried again once the files change.
func TestPairReload(t *testing.T) {
	ca := testca.New(t)
	dir := t.TempDir()
	a, b := ca.Issue(t, "kfa.test"), ca.Issue(t, "kfa.test")
	certFile, keyFile := a.Write(t, dir)
	p, err := certs.NewPair(certFile, keyFile, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	serving := func(want testca.Pair, step string) {
		t.Helper()
		got := p.Certificate().Leaf.SerialNumber
		if got.Cmp(want.Leaf.SerialNumber) != 0 {
			t.Fatalf("%s: serving serial %s, want %s", step, got, want.Leaf.SerialNumber)
		}
		c, err := p.TLSConfig().GetCertificate(&tls.ClientHelloInfo{ServerName: "other.name"})
		if err != nil || c.Leaf.SerialNumber.Cmp(want.Leaf.SerialNumber) != 0 {
			t.Fatalf("%s: GetCertificate gives another certificate (%v)", step, err)
		}
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reload := func(wantChanged, wantErr bool, step string) {
		t.Helper()
		changed, err := p.Reload()
		if changed != wantChanged || (err != nil) != wantErr {
			t.Fatalf("%s: Reload = %v, %v; want changed %v, error %v", step, changed, err, wantChanged, wantErr)
		}
	}
	serving(a, "start")
	reload(false, false, "nothing changed")

	write("cert.pem", b.Cert) // the key is still a's
	reload(false, true, "new certificate, old key")
	serving(a, "new certificate, old key")
	reload(false, false, "the same mismatched pair again") // tried once, not again
	serving(a, "the same mismatched pair again")

	write("key.pem", b.Key)
	reload(true, false, "both written")
	serving(b, "both written")

	write("cert.pem", a.Cert)
	reload(false, true, "old certificate, new key")
	serving(b, "old certificate, new key")

	write("cert.pem", b.Cert[:len(b.Cert)/2])
	reload(false, true, "truncated certificate")
	serving(b, "truncated certificate")

	if err := os.Remove(filepath.Join(dir, "key.pem")); err != nil {
		t.Fatal(err)
	}
	reload(false, true, "key file missing")
	serving(b, "key file missing")

	write("cert.pem", a.Cert)
	write("key.pem", a.Key)
	reload(true, false, "a good pair again")
	serving(a, "a good pair again")
}

// TestNewPairRefusesABadPair: kfa serve does not start on a pair that
// does not match.
func TestNewPairRefusesABadPair(t *testing.T) {
	ca := testca.New(t)
	dir := t.TempDir()
	a, b := ca.Issue(t, "kfa.test"), ca.Issue(t, "kfa.test")
	certFile, keyFile := a.Write(t, dir)
	if err := os.WriteFile(keyFile, b.Key, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := certs.NewPair(certFile, keyFile, 0, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("NewPair took a certificate with another certificate's key")
	}
	if _, err := certs.ReadPair(certFile, filepath.Join(dir, "missing.pem")); err == nil {
		t.Fatal("ReadPair took a missing key file")
	}
}

// TestPairLogsServed: serving starts with a log line naming the
// certificate, its serial in hex as openssl and browsers show it, and
// its expiry; an expired certificate, or one that names its host in the
// common name alone, is a warning, since clients refuse it.
func TestPairLogsServed(t *testing.T) {
	ca := testca.New(t)
	for _, tc := range []struct {
		name  string
		pair  testca.Pair
		want  string
		names string
	}{
		{"valid", ca.IssueUntil(t, time.Now().Add(time.Hour), "kfa.test", "127.0.0.1"), `level=INFO msg="tls: certificate loaded"`, "kfa.test,127.0.0.1"},
		{"expired", ca.IssueUntil(t, time.Now().Add(-time.Hour), "kfa.test", "127.0.0.1"),
			`level=WARN msg="tls: certificate loaded; it has expired`, "kfa.test,127.0.0.1"},
		{"a common name only", ca.IssueCommonName(t, "localhost"), `level=WARN msg="tls: certificate loaded; it names no host in its subjectAltName`, `""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := tc.pair
			certFile, keyFile := pair.Write(t, t.TempDir())
			var logs bytes.Buffer
			p, err := certs.NewPair(certFile, keyFile, time.Hour, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			p.Start(context.Background())
			p.Stop()
			got := logs.String()
			serial := fmt.Sprintf("serial=%X", pair.Leaf.SerialNumber.Bytes())
			if !strings.Contains(got, tc.want) || !strings.Contains(got, serial) || !strings.Contains(got, "names="+tc.names) {
				t.Fatalf("log %q, want %s with %s", got, tc.want, serial)
			}
		})
	}
}
