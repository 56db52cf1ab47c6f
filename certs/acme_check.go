package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Waits of the checks after a failure: a certificate another process is
// obtaining is looked for again soon; any other failure (the CA down, a
// challenge that failed) waits a minute, then twice as long each time, up
// to CheckEvery. autocert itself does not try a name again within a
// minute of a failure.
const (
	claimedRetry = 5 * time.Second
	firstRetry   = time.Minute
)

func (a *ACME) run(ctx context.Context) {
	served := map[string]string{} // domain -> serial logged as served
	failures := 0
	for {
		wait, failed := a.o.CheckEvery, false
		for _, d := range a.o.Domains {
			next, err := a.check(ctx, d, served)
			if ctx.Err() != nil {
				return
			}
			switch {
			case errors.Is(err, ErrClaimed):
				// Not a failure: a peer on the shared cache obtains it.
				a.o.Log.Info("tls: another process is obtaining the certificate; waiting for it", "domain", d)
				next = claimedRetry
			case err != nil:
				failed = true
				a.o.Log.Warn("tls: ACME", "domain", d, "err", err)
				if next <= 0 {
					next = firstRetry << min(failures, 10)
				}
			}
			wait = min(wait, next)
		}
		if failed {
			failures++
		} else {
			failures = 0
		}
		// Processes that share a cache check at different moments.
		wait = max(wait-rand.N(wait/10+1), time.Millisecond)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// check makes sure domain has a certificate, adopts a newer one another
// process stored, and replaces it when the CA's renewal information says
// so. It returns when to check again (0 after a failure: the caller's
// backoff).
func (a *ACME) check(ctx context.Context, domain string, served map[string]string) (time.Duration, error) {
	cert, err := a.obtain(ctx, a.cur.Load(), domain)
	if err != nil {
		return 0, fmt.Errorf("obtain a certificate: %w", err)
	}
	if c := a.cached(ctx, domain); c != nil && newer(c, cert.Leaf) {
		if cert, err = a.replace(ctx, domain, false); err != nil {
			return 0, fmt.Errorf("load the certificate another process obtained: %w", err)
		}
	}
	a.logServed(domain, cert.Leaf, served, "obtained or loaded")
	at, again, err := a.ari.RenewAt(ctx, cert.Leaf)
	switch {
	case errors.Is(err, errNoARI):
		return a.o.CheckEvery, nil
	case err != nil:
		// autocert still renews before expiry; ask again later.
		return a.o.CheckEvery, err
	}
	if wait := time.Until(at); wait > 0 {
		return min(again, wait), nil
	}
	old := SerialHex(cert.Leaf)
	if cert, err = a.replace(ctx, domain, true); err != nil {
		return 0, fmt.Errorf("renew as the CA asked: %w", err)
	}
	a.o.Log.Info("tls: renewed the certificate as the CA's renewal information asked (revoked, or to be replaced early)",
		"domain", domain, "old_serial", old)
	a.logServed(domain, cert.Leaf, served, "renewed")
	return again, nil
}

// logServed logs a certificate the first time it is served.
func (a *ACME) logServed(domain string, leaf *x509.Certificate, served map[string]string, how string) {
	serial := SerialHex(leaf)
	if served[domain] == serial {
		return
	}
	served[domain] = serial
	a.o.Log.Info("tls: certificate "+how, "domain", domain, "serial", serial, "issuer", leaf.Issuer.String(),
		"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
}

// replace builds a new manager, has it obtain domain's certificate (a
// new one when fresh, else the cached one) and serves from it once it
// has. Until then the current manager serves as before; on failure it
// keeps serving.
func (a *ACME) replace(ctx context.Context, domain string, fresh bool) (*tls.Certificate, error) {
	a.swapM.Lock()
	defer a.swapM.Unlock()
	c := a.cache
	if fresh {
		c = hide(c, domain)
	}
	m := a.newManager(c)
	cert, err := a.obtain(ctx, m, domain)
	if err != nil {
		return nil, err
	}
	// The old manager's renewal timers stay armed (autocert cannot stop
	// them): when one fires it finds the new certificate in the cache and
	// renews nothing.
	a.cur.Store(m)
	return cert, nil
}

// obtain is m's certificate for domain, obtained from the CA if neither
// m nor the cache has one. autocert bounds the work (five minutes) on
// its own context, so a Stop does not wait for it.
func (a *ACME) obtain(ctx context.Context, m *manager, domain string) (*tls.Certificate, error) {
	type result struct {
		c   *tls.Certificate
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := m.m.GetCertificate(helloFor(domain))
		ch <- result{c, err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.err == nil && r.c.Leaf == nil {
			return nil, errors.New("autocert returned a certificate without its leaf")
		}
		return r.c, r.err
	}
}

// helloFor is a handshake for domain from a client that takes ECDSA,
// as every current client does.
func helloFor(domain string) *tls.ClientHelloInfo {
	return &tls.ClientHelloInfo{
		ServerName:       domain,
		SignatureSchemes: []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256},
		SupportedCurves:  []tls.CurveID{tls.CurveP256},
		CipherSuites:     []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	}
}

// cached is domain's certificate as the cache holds it now, nil if none
// (or not one that parses). It reads past a SharedCache's claims.
func (a *ACME) cached(ctx context.Context, domain string) *x509.Certificate {
	c := a.cache
	if s, ok := a.o.Cache.(sharedCache); ok {
		c = a.namespace(s.Cache)
	}
	b, err := c.Get(ctx, domain)
	if err != nil {
		return nil
	}
	for len(b) > 0 {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return nil
		}
		if blk.Type == "CERTIFICATE" {
			leaf, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil
			}
			return leaf
		}
	}
	return nil
}

// newer tells whether c replaces cur: another certificate, issued no
// earlier, and valid now.
func newer(c, cur *x509.Certificate) bool {
	return c.SerialNumber.Cmp(cur.SerialNumber) != 0 && !c.NotBefore.Before(cur.NotBefore) && time.Now().Before(c.NotAfter)
}
