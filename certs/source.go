package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"
	"sync"
)

// Source is where the public listener's certificates come from.
type Source interface {
	// TLSConfig is the configuration of the HTTPS listener: HTTP/2 and
	// HTTP/1.1, TLS 1.2 at least, the current certificate on every
	// handshake. Each call returns a new value the caller may change.
	TLSConfig() *tls.Config
	// Start begins the background work (watching files, renewing); Stop
	// ends it, returns once it has, and tolerates a second call.
	Start(ctx context.Context)
	Stop()
}

// baseConfig is the TLS configuration both sources start from.
func baseConfig(get func(*tls.ClientHelloInfo) (*tls.Certificate, error)) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: get,
		NextProtos:     []string{"h2", "http/1.1"},
	}
}

// loop runs one background function between Start and Stop.
type loop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// start runs run(ctx) in a goroutine until stop.
func (l *loop) start(ctx context.Context, run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	l.mu.Lock()
	l.cancel, l.done = cancel, make(chan struct{})
	l.mu.Unlock()
	go func() {
		defer close(l.done)
		run(ctx)
	}()
}

// stop cancels the run and waits for it; safe twice, or without start.
func (l *loop) stop() {
	l.once.Do(func() {
		l.mu.Lock()
		cancel, done := l.cancel, l.done
		l.mu.Unlock()
		if cancel == nil {
			return
		}
		cancel()
		<-done
	})
}

// SerialHex is the certificate's serial number as the log shows it: in
// hex, as openssl x509 -serial and browsers show it, so that an operator
// can match a log line with a file or a browser's view.
func SerialHex(c *x509.Certificate) string { return fmt.Sprintf("%X", c.SerialNumber.Bytes()) }

// certNames are the names a certificate serves, for the log.
func certNames(c *x509.Certificate) string {
	names := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	return strings.Join(names, ",")
}
