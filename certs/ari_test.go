package certs_test

import (
	"crypto/x509"
	"math/big"
	"testing"

	"github.com/kfa-project/kfa/certs"
)

// TestCertID checks the identifier against RFC 9773's example (§4.1),
// whose serial has its high bit set: DER keeps a leading zero byte.
func TestCertID(t *testing.T) {
	aki := []byte{0x69, 0x88, 0x5B, 0x6B, 0x87, 0x46, 0x40, 0x41, 0xE1, 0xB3, 0x7B, 0x84, 0x7B, 0xA0, 0xAE, 0x2C, 0xDE, 0x01, 0xC8, 0xD4}
	leaf := &x509.Certificate{AuthorityKeyId: aki, SerialNumber: new(big.Int).SetBytes([]byte{0x87, 0x65, 0x43, 0x21})}
	got, err := certs.CertID(leaf)
	if want := "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE"; err != nil || got != want {
		t.Fatalf("CertID = %q, %v; want %q", got, err, want)
	}
	leaf.SerialNumber = big.NewInt(0x1234)
	if got, _ := certs.CertID(leaf); got != "aYhba4dGQEHhs3uEe6CuLN4ByNQ.EjQ" {
		t.Fatalf("CertID of a serial without its high bit = %q", got)
	}
	if _, err := certs.CertID(&x509.Certificate{SerialNumber: big.NewInt(1)}); err == nil {
		t.Fatal("CertID of a certificate without an authority key identifier")
	}
}
