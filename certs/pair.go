package certs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReloadEvery is how often a Pair reads its files again.
const DefaultReloadEvery = 10 * time.Second

// Pair is a certificate and its key read from two PEM files, read again
// every so often: a renewal (certbot's, an operator's copy, a Kubernetes
// secret's symlink swap) is served from the next handshake on, without
// a restart. A pair that does not parse, or whose key does not match its
// certificate (one file written, the other not yet), never replaces the
// one being served; it is tried again once either file changes.
type Pair struct {
	certFile, keyFile string
	every             time.Duration
	log               *slog.Logger

	cur atomic.Pointer[tls.Certificate]

	mu    sync.Mutex
	tried [sha256.Size]byte // digest of the contents read last, good or bad

	loop loop
}

// ReadPair reads and checks a key pair: the certificate chain parses and
// the key is its leaf's.
func ReadPair(certFile, keyFile string) (*tls.Certificate, error) {
	c, k, err := readFiles(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return parsePair(c, k)
}

func readFiles(certFile, keyFile string) (certPEM, keyPEM []byte, err error) {
	if certPEM, err = os.ReadFile(certFile); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = os.ReadFile(keyFile); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

func parsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// NewPair reads the pair now (an error if it is not a good one) and
// reads it again every every (DefaultReloadEvery when 0) once started.
func NewPair(certFile, keyFile string, every time.Duration, log *slog.Logger) (*Pair, error) {
	if every <= 0 {
		every = DefaultReloadEvery
	}
	p := &Pair{certFile: certFile, keyFile: keyFile, every: every, log: log}
	c, k, err := readFiles(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	cert, err := parsePair(c, k)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", certFile, keyFile, err)
	}
	p.tried = digest(c, k)
	p.cur.Store(cert)
	return p, nil
}

// digest identifies the contents of both files together.
func digest(certPEM, keyPEM []byte) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", len(certPEM))
	h.Write(certPEM)
	h.Write(keyPEM)
	var d [sha256.Size]byte
	copy(d[:], h.Sum(nil))
	return d
}

// Certificate is the certificate served now.
func (p *Pair) Certificate() *tls.Certificate { return p.cur.Load() }

// Reload reads the files again. It reports whether the served
// certificate changed; an error means the files hold no good pair, and
// the certificate served is still the previous one.
func (p *Pair) Reload() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, k, err := readFiles(p.certFile, p.keyFile)
	if err != nil {
		return false, err
	}
	d := digest(c, k)
	if d == p.tried {
		return false, nil
	}
	p.tried = d
	cert, err := parsePair(c, k)
	if err != nil {
		return false, fmt.Errorf("%s and %s: %w", p.certFile, p.keyFile, err)
	}
	// The same certificate written again (a copy, a touch) is no change
	// worth a log line; the chain around it may still have changed.
	changed := !bytes.Equal(p.cur.Load().Certificate[0], cert.Certificate[0])
	p.cur.Store(cert)
	return changed, nil
}

// TLSConfig serves the current pair to every handshake, whatever name
// the client asks for.
func (p *Pair) TLSConfig() *tls.Config {
	return baseConfig(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return p.cur.Load(), nil })
}

// Start reads the files again every so often until Stop.
func (p *Pair) Start(ctx context.Context) {
	p.logServed("tls: certificate loaded")
	p.loop.start(ctx, func(ctx context.Context) {
		t := time.NewTicker(p.every)
		defer t.Stop()
		lastErr := ""
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			changed, err := p.Reload()
			switch {
			case err != nil:
				// Log a bad pair once, not at every tick.
				if err.Error() != lastErr {
					p.log.Warn("tls: the certificate files hold no good pair; still serving the previous certificate", "err", err)
				}
				lastErr = err.Error()
			case changed:
				lastErr = ""
				p.logServed("tls: certificate reloaded")
			}
		}
	})
}

// logServed logs the certificate served now, as a warning when clients
// refuse it: it has expired (only whoever writes the files can renew
// it), or it names its host in the common name alone.
func (p *Pair) logServed(msg string) {
	leaf := p.cur.Load().Leaf
	attrs := []any{"subject", leaf.Subject.String(), "names", certNames(leaf), "serial", SerialHex(leaf),
		"not_after", leaf.NotAfter.UTC().Format(time.RFC3339)}
	switch {
	case time.Now().After(leaf.NotAfter):
		p.log.Warn(msg+"; it has expired, so clients refuse it: write a renewed pair over the files", attrs...)
	case len(leaf.DNSNames) == 0 && len(leaf.IPAddresses) == 0:
		// Go's TLS (the official Go SDK's) and browsers look for the host
		// in subjectAltName only.
		p.log.Warn(msg+"; it names no host in its subjectAltName, only in its common name, so Go clients and browsers refuse it: "+
			"make it with the host in subjectAltName (openssl req -addext 'subjectAltName=DNS:NAME')", attrs...)
	default:
		p.log.Info(msg, attrs...)
	}
}

// Stop ends the reloading; safe twice.
func (p *Pair) Stop() { p.loop.stop() }
