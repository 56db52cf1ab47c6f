package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"

	"github.com/kfa-project/kfa/certs"
	"github.com/kfa-project/kfa/store/postgres"
)

// hstsValue is the Strict-Transport-Security header of every answer over
// HTTPS: browsers that saw it use only HTTPS with this host for a year,
// so an attacker on the network cannot downgrade a visit to plain HTTP
// (and read the session cookie). A year is what browsers' preload lists
// and the common guidance ask for: long enough to cover the gaps between
// visits, and an operator who moves kfa behind a proxy keeps HTTPS on
// the name anyway. No includeSubDomains: kfa owns its host name, not
// its parent's other hosts, which may still serve plain HTTP; no preload,
// which is the domain owner's decision, not kfa's (docs/security.md).
const hstsValue = "max-age=31536000"

// publicTLS is the public listener's HTTPS: where its certificates come
// from, and the listener that answers HTTP-01 challenges.
type publicTLS struct {
	source certs.Source
	// http answers HTTP-01 challenges and redirects to HTTPS
	// (--acme-http-addr); nil without ACME or with it off.
	http *http.Server
	// httpLn is its listener: opened by Run before the store is, or by
	// startTLS.
	httpLn net.Listener
}

// openTLS opens the certificates' source when the configuration asks
// for HTTPS (before the public and gRPC servers are built, which take
// it).
func (s *Server) openTLS() error {
	t := s.cfg.TLS
	if !t.On() {
		return nil
	}
	pt := &publicTLS{}
	if t.CertFile != "" {
		p, err := certs.NewPair(t.CertFile, t.KeyFile, t.ReloadEvery, s.log)
		if err != nil {
			return fmt.Errorf("config: tls-cert: %w", err)
		}
		pt.source = p
	} else {
		cache, err := s.acmeCache()
		if err != nil {
			return err
		}
		var httpsPort string
		if u, err := url.Parse(s.cfg.PublicURL); err == nil {
			httpsPort = u.Port()
		}
		a, err := certs.NewACME(certs.ACMEOptions{
			Domains: t.ACMEDomains, Email: t.ACMEEmail, Directory: t.ACMEDirectory, Cache: cache,
			HTTPClient: t.ACMEHTTPClient, HTTP01: t.ACMEHTTPAddr != acmeHTTPOff, HTTPSPort: httpsPort,
			CheckEvery: t.ACMECheckEvery, Log: s.log,
		})
		if err != nil {
			return fmt.Errorf("config: acme-domain: %w", err)
		}
		pt.source = a
		if h := a.HTTPHandler(); h != nil {
			pt.http = &http.Server{
				Handler:           h,
				ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
				ReadTimeout:       s.cfg.ReadTimeout,
				WriteTimeout:      s.cfg.WriteTimeout,
				IdleTimeout:       s.cfg.IdleTimeout,
				MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
				ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
			}
		}
	}
	s.tls = pt
	return nil
}

// serveTLS makes the public server serve HTTPS, with HSTS, when the
// certificates' source is open (once New built the server, before it
// listens).
func (s *Server) serveTLS() {
	if s.tls == nil {
		return
	}
	s.public.TLSConfig = s.tls.source.TLSConfig()
	s.public.Handler = hsts(s.public.Handler)
}

// acmeCache is where the ACME state lives: <data>/acme with the bbolt
// file (one process holds the data directory), the database on
// PostgreSQL, shared by every process on it.
func (s *Server) acmeCache() (certs.Cache, error) {
	if pg, ok := s.core.Store.(*postgres.DB); ok {
		c := pg.TLSCache()
		return certs.SharedCache(pgTLSCache{c}, c), nil
	}
	c, err := certs.DirCache(filepath.Join(s.cfg.DataDir, "acme"))
	if err != nil {
		return nil, fmt.Errorf("acme cache: %w", err)
	}
	return c, nil
}

// pgTLSCache is the PostgreSQL TLS cache as a certs.Cache: only its miss
// differs.
type pgTLSCache struct{ postgres.TLSCache }

func (c pgTLSCache) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := c.TLSCache.Get(ctx, key)
	if errors.Is(err, postgres.ErrTLSCacheMiss) {
		return nil, certs.ErrCacheMiss
	}
	return b, err
}

// listenACMEHTTP opens the HTTP-01 listener, nil when there is none.
func listenACMEHTTP(cfg Config) (net.Listener, error) {
	if len(cfg.TLS.ACMEDomains) == 0 || cfg.TLS.ACMEHTTPAddr == acmeHTTPOff {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.TLS.ACMEHTTPAddr)
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	if err != nil {
		return nil, fmt.Errorf("listen on acme-http-addr %s: %w", cfg.TLS.ACMEHTTPAddr, err)
	}
	return ln, nil
}

// startTLS serves the HTTP-01 listener (opened by Run or Start) and
// starts the certificates' background work, once the public listener
// serves: obtaining a certificate may need it for TLS-ALPN-01.
func (s *Server) startTLS() {
	if s.tls == nil {
		return
	}
	if s.tls.http != nil && s.tls.httpLn != nil {
		go func() { s.serveErr <- ignoreClosed(s.tls.http.Serve(s.tls.httpLn)) }()
	}
	s.tls.source.Start(context.Background())
}

// stopTLS stops the certificates' background work and the HTTP-01
// listener.
func (s *Server) stopTLS(ctx context.Context) error {
	if s.tls == nil {
		return nil
	}
	s.tls.source.Stop()
	if s.tls.http == nil || s.tls.httpLn == nil {
		return nil
	}
	if err := s.tls.http.Shutdown(ctx); err != nil {
		_ = s.tls.http.Close()
		return fmt.Errorf("drain acme-http-addr: %w", err)
	}
	return nil
}

// tlsMode says where the certificates come from, for the log.
func (s *Server) tlsMode() string {
	switch {
	case s.tls == nil:
		return "off"
	case s.cfg.TLS.CertFile != "":
		return "files"
	}
	return "acme"
}

// servePublic serves the public listener, over TLS when configured.
func (s *Server) servePublic(ln net.Listener) error {
	if s.tls != nil {
		return s.public.ServeTLS(ln, "", "")
	}
	return s.public.Serve(ln)
}

// hsts adds the Strict-Transport-Security header to every answer.
func hsts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", hstsValue)
		next.ServeHTTP(w, r)
	})
}

// TLSConfig is the public listener's TLS configuration for another
// listener of this process (a gRPC server takes it through
// credentials.NewTLS): the same certificates, renewed and reloaded
// alike, offering HTTP/2 only. Nil when kfa serves plain HTTP.
func (s *Server) TLSConfig() *tls.Config {
	if s.tls == nil {
		return nil
	}
	c := s.tls.source.TLSConfig()
	c.NextProtos = []string{"h2"}
	return c
}

// ACMEHTTPAddr is the address the HTTP-01 listener is bound to, "" when
// there is none (useful with :0).
func (s *Server) ACMEHTTPAddr() string {
	if s.tls == nil || s.tls.httpLn == nil {
		return ""
	}
	return s.tls.httpLn.Addr().String()
}
