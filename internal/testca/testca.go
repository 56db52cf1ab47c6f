// Package testca makes certificate authorities and certificates for
// tests of kfa's HTTPS: a CA a test client trusts, and leaf key pairs it
// signs, as PEM. It is for tests only; nothing outside _test.go files
// imports it.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority for one test.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA's certificate.
	PEM []byte
	// Pool trusts the CA alone.
	Pool *x509.CertPool
}

// New makes a CA valid for a day.
func New(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "kfa test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{cert: cert, key: key, PEM: pemBlock("CERTIFICATE", der), Pool: pool}
}

// Pair is a leaf certificate and its key, as PEM.
type Pair struct {
	Cert, Key []byte
	// Leaf is the parsed certificate.
	Leaf *x509.Certificate
}

// Issue signs a server certificate for names (host names, or IP
// addresses), valid for a day.
func (ca *CA) Issue(t testing.TB, names ...string) Pair {
	t.Helper()
	return ca.IssueUntil(t, time.Now().Add(24*time.Hour), names...)
}

// IssueUntil signs a server certificate for names valid from two days
// ago until notAfter (in the past: an expired one).
func (ca *CA) IssueUntil(t testing.TB, notAfter time.Time, names ...string) Pair {
	t.Helper()
	tmpl := leafTemplate(t, names[0], notAfter)
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	return ca.sign(t, tmpl)
}

// IssueCommonName signs a certificate that names its host in the
// subject's common name only, with no subjectAltName extension: what
// openssl req -x509 -subj /CN=host makes without -addext.
func (ca *CA) IssueCommonName(t testing.TB, host string) Pair {
	t.Helper()
	return ca.sign(t, leafTemplate(t, host, time.Now().Add(24*time.Hour)))
}

func leafTemplate(t testing.TB, cn string, notAfter time.Time) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-48 * time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
}

// sign signs tmpl with a new key.
func (ca *CA) sign(t testing.TB, tmpl *x509.Certificate) Pair {
	t.Helper()
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Pair{Cert: pemBlock("CERTIFICATE", der), Key: pemBlock("PRIVATE KEY", kder), Leaf: leaf}
}

// Write writes the pair to dir/cert.pem and dir/key.pem (the key 0600)
// and returns their paths.
func (p Pair) Write(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, p.Cert, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, p.Key, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
