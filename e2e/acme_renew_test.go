package e2e

import (
	"context"
	"crypto/x509"
	"log/slog"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pebbletest"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
)

// TestACMERenewKeepsStreams: when the CA's renewal information says
// "renew now" (a CA replacing certificates early), kfa obtains a new
// certificate and serves it to new connections, HTTPS and gRPC, without
// a restart, and an SSE stream opened over the old one stays open and
// hears the reply.
func TestACMERenewKeepsStreams(t *testing.T) {
	t.Parallel() // each has its own CA and ports, and mostly waits on them
	s := startACME(t)
	h, pb, addr, roots, old := s.h, s.pb, s.addr, s.roots, s.serial
	hc := nameClient(roots, addr)
	base := "https://" + acmeName
	alice, _ := h.agent("alice")
	ac := client.New(base, client.WithToken(alice.Token), client.WithHTTPClient(hc))
	bob, _ := h.agent("bob")
	bc := client.New(base, client.WithToken(bob.Token), client.WithHTTPClient(hc))
	tk := h.ask(ac, "renew-1", "Does a stream outlive a certificate renewal?")
	stream := openSSE(t, hc, "GET", base+"/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(alice.Token), "")
	if stream.resp.ProtoMajor != 2 {
		t.Fatalf("the stream runs over %s, want HTTP/2", stream.resp.Proto)
	}
	if first := decodeEvent(t, stream.next(t)); first.Task == nil || first.Task.ID != tk.ID {
		t.Fatalf("first event: %+v", first)
	}

	der, _ := cachedPair(t, h, old)
	pb.RenewNow(t, der)
	renewed := waitCert(t, addr, roots, old, "the renewed certificate")
	if pb.Status(t, renewed) != "Valid" {
		t.Fatalf("the renewed certificate is %s at the CA", pb.Status(t, renewed))
	}
	waitServed(t, h.srv.GRPCAddr(), acmeName, roots, renewed, "the renewed certificate on the gRPC listener")
	if !strings.Contains(h.logBuf.String(), "renewed the certificate as the CA's renewal information asked") {
		t.Fatal("the renewal is not logged")
	}

	// The stream, on its connection made with the old certificate, still
	// carries the reply.
	if _, err := bc.Reply(context.Background(), discussionOf(t, tk), "Yes: TLS renewal touches only new handshakes."); err != nil {
		t.Fatal(err)
	}
	if art := decodeEvent(t, stream.next(t)); art.ArtifactUpdate == nil || art.ArtifactUpdate.TaskID != tk.ID {
		t.Fatalf("after the renewal the stream carried %+v, want the reply", art)
	}
	if st := decodeEvent(t, stream.next(t)); st.StatusUpdate == nil || st.StatusUpdate.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after the renewal the stream carried %+v, want the completion", st)
	}
}

// TestACMERevoked: a certificate revoked at the CA (its key leaked) is
// replaced: the CA's renewal information says renew now, and kfa serves
// a new, valid certificate within a check, without a restart.
func TestACMERevoked(t *testing.T) {
	t.Parallel() // each has its own CA and ports, and mostly waits on them
	s := startACME(t)
	h, pb, addr, roots, old := s.h, s.pb, s.addr, s.roots, s.serial
	der, key := cachedPair(t, h, old)
	pb.Revoke(t, der, key)
	if st := pb.Status(t, old); st != "Revoked" {
		t.Fatalf("the revoked certificate is %s at the CA", st)
	}
	fresh := waitCert(t, addr, roots, old, "a certificate to replace the revoked one")
	if st := pb.Status(t, fresh); st != "Valid" {
		t.Fatalf("the replacement is %s at the CA", st)
	}
	cachedPair(t, h, fresh) // the cache holds the new one, not the revoked one
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestACMESharedOnPostgres: two processes on one PostgreSQL database
// that start together obtain one certificate between them (the first
// claims it, the other waits for it in the shared cache) and both serve
// it. The CA validates on the first process's port only, so when the
// second obtains it, the first answers its challenge from the cache, as
// behind a load balancer.
func TestACMESharedOnPostgres(t *testing.T) {
	t.Parallel() // each has its own CA and ports, and mostly waits on them
	url := pgtest.URL(t)
	addrA, portA := pebbletest.FreeAddr(t)
	addrB, _ := pebbletest.FreeAddr(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: portA})
	var hs []*harness
	for _, addr := range []string{addrA, addrB} {
		hs = append(hs, prepare(t, func(c *server.Config) {
			acmeConfig(pb, addr, "off")(c)
			c.Store = url
		}))
	}
	for _, h := range hs { // back to back: both go for the certificate at once
		h.begin()
	}
	roots := pb.Roots(t)
	serials := []*big.Int{waitCert(t, addrA, roots, nil, "A's certificate"), waitCert(t, addrB, roots, nil, "B's certificate")}
	if serials[0].Cmp(serials[1]) != 0 {
		t.Fatalf("A serves serial %s, B %s: want one certificate", serials[0], serials[1])
	}
	if n, o := pb.Issued(), pb.Orders(); n != 1 || o != 1 {
		t.Fatalf("the CA issued %d certificates on %d orders for two processes, want 1 on 1", n, o)
	}
}

// prepare builds a server as start does, without starting it.
func prepare(t *testing.T, mutate func(*server.Config)) *harness {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = filepath.Join(shortTempDir(t), "data")
	cfg.BatchDelay = time.Millisecond
	mutate(&cfg)
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, cfg: cfg, srv: srv, logBuf: logs}
}

// begin starts a prepared server, and stops it when the test ends.
func (h *harness) begin() {
	h.t.Helper()
	if err := h.srv.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.url = h.srv.URL()
	h.admin = client.NewUnix(filepath.Join(h.cfg.DataDir, "kfa.sock"))
	h.t.Cleanup(func() {
		h.stop()
		if h.t.Failed() {
			h.t.Logf("server log:\n%s", h.logBuf.String())
		}
	})
}

// TestACMERenewsBeforeExpiry: left alone, with no one forcing anything,
// a certificate is renewed before it expires and the new one served
// without a restart: Pebble issues 40-second certificates, whose
// renewal (autocert's timer at two thirds of the lifetime, or the CA's
// own renewal window) comes within seconds.
func TestACMERenewsBeforeExpiry(t *testing.T) {
	t.Parallel() // each has its own CA and ports, and mostly waits on them
	addr, port := pebbletest.FreeAddr(t)
	pb := pebbletest.Start(t, pebbletest.Options{TLSPort: port, Validity: 40 * time.Second})
	h := start(t, acmeConfig(pb, addr, "off"))
	roots := pb.Roots(t)
	first := waitCert(t, addr, roots, nil, "the first certificate")
	der, _ := cachedPair(t, h, first)
	expires := mustParse(t, der).NotAfter
	renewed := waitCert(t, addr, roots, first, "the certificate renewed before the first expires")
	if now := time.Now(); !now.Before(expires) {
		t.Fatalf("the renewal was served at %s, after the first certificate expired at %s", now, expires)
	}
	if st := pb.Status(t, renewed); st != "Valid" {
		t.Fatalf("the renewed certificate is %s at the CA", st)
	}
}
