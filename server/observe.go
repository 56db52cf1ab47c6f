package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/kfa-project/kfa/metrics"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/store/postgres"
)

// observability is the server's metrics: one registry, the stores that
// count ask-network events, and the optional separate metrics listener.
type observability struct {
	m    *metrics.Metrics
	addr string // MetricsAddr; "" serves /metrics on the public listener
	srv  *http.Server
	ln   net.Listener
}

func newObservability(cfg Config, log *slog.Logger) *observability {
	o := &observability{m: metrics.New(cfg.Version), addr: cfg.MetricsAddr}
	if o.addr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET "+metrics.Path, o.m.Handler())
		o.srv = &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: cfg.ReadHeaderTimeout,
			ReadTimeout:       cfg.ReadTimeout,
			WriteTimeout:      cfg.WriteTimeout,
			IdleTimeout:       cfg.IdleTimeout,
			MaxHeaderBytes:    cfg.MaxHeaderBytes,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
	}
	return o
}

// watch reads the store's counters, and bbolt's statistics on the bbolt
// file, at each scrape.
func (o *observability) watch(core *Core) {
	if core.DB != nil {
		o.m.WatchStore(boltSource{core.DB})
		return
	}
	if pg, ok := core.Store.(*postgres.DB); ok {
		o.m.WatchCounts(pgCounts{pg})
	}
}

// handler instruments the public router, labelling requests with the
// route template each matched (/metrics among them, when the public
// listener serves it).
func (o *observability) handler(rt *router) http.Handler {
	return o.m.Instrument(rt, rt.RouteTemplate)
}

// start listens on the metrics address, if any.
func (o *observability) start(errs chan<- error) error {
	if o.srv == nil {
		return nil
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on metrics-addr %s: %w", o.addr, err)
	}
	o.ln = ln
	go func() { errs <- ignoreClosed(o.srv.Serve(ln)) }()
	return nil
}

// shutdown stops the metrics listener, if any.
func (o *observability) shutdown(ctx context.Context) error {
	if o.ln == nil {
		return nil
	}
	if err := o.srv.Shutdown(ctx); err != nil {
		_ = o.srv.Close()
		return fmt.Errorf("drain metrics listener: %w", err)
	}
	return nil
}

// MetricsAddr is the address the separate metrics listener is bound to,
// or "" when /metrics is served on the public listener.
func (s *Server) MetricsAddr() string {
	if s.obs.ln == nil {
		return ""
	}
	return s.obs.ln.Addr().String()
}

// Metrics returns the server's metrics (for tests and embedding).
func (s *Server) Metrics() *metrics.Metrics { return s.obs.m }

// boltSource gives the metrics the bbolt file's counters and statistics
// in their own types (the two have the same fields).
type boltSource struct{ db *store.DB }

func (b boltSource) Counts() (metrics.Counts, error) {
	c, err := b.db.Counts()
	return metrics.Counts(c), err
}

func (b boltSource) BoltStats() metrics.BoltStats { return metrics.BoltStats(b.db.BoltStats()) }

func (b boltSource) FileSize() (int64, error) { return b.db.FileSize() }
