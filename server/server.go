package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/apiv1"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discovery"
	"github.com/kfa-project/kfa/events"
	"github.com/kfa-project/kfa/federation"
	"github.com/kfa-project/kfa/grpcbinding"
	"github.com/kfa-project/kfa/httpjson"
	"github.com/kfa-project/kfa/jsonrpc"
	"github.com/kfa-project/kfa/oauth"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/search"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/web"
	"github.com/kfa-project/kfa/webhook"
)

// Server is a running kfa: public listener, admin socket, store.
type Server struct {
	cfg    Config
	log    *slog.Logger
	core   *Core
	broker *events.Broker
	obs    *observability

	public *http.Server
	admin  *http.Server
	pprof  *http.Server // nil unless cfg.PprofAddr is set
	ln     net.Listener
	adLn   net.Listener
	tls    *publicTLS // nil when the public listener serves plain HTTP (tls.go)
	// grpc serves the A2A gRPC binding on grpcLn; both nil when
	// --grpc-addr is empty.
	grpc   *grpcbinding.Server
	grpcLn net.Listener

	ready    atomic.Bool
	serveErr chan error

	index   *search.Index
	trimmer *changelog.Trimmer // nil when the log is kept whole
	live    *changelog.Runner  // the in-memory followers of the log (follow.go)
	creds   *agents.CredCache

	worker *webhook.Worker // nil with push notifications off
	// fed follows the peers and forwards asks (federation.go).
	fed *federation.Runner

	// oauth verifies the OAuth providers' access tokens (oauth.go); nil
	// without --oauth-issuer. oauthServices are the services whose card
	// and documents name the providers.
	oauth         *oauth.Verifier
	oauthServices []*service.Service
	oauthMu       sync.Mutex
	oauthStop     context.CancelFunc
	oauthDone     chan struct{}
}

// New validates cfg, opens the store and builds the handlers. Nothing
// listens until Start.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	grpcLn, err := listenGRPC(cfg.GRPCAddr)
	if err != nil {
		return nil, err
	}
	s, err := newServer(cfg, log, grpcLn)
	if err != nil && grpcLn != nil {
		_ = grpcLn.Close()
	}
	return s, err
}

// newServer is New with the gRPC listener open (nil when off).
func newServer(cfg Config, log *slog.Logger, grpcLn net.Listener) (*Server, error) {
	broker := events.NewBroker(events.Limits{PerAgent: cfg.MaxStreamsPerAgent, Total: cfg.MaxStreams})
	obs := newObservability(cfg, log)
	policy, err := push.ParseAllow(cfg.PushAllow)
	if err != nil {
		return nil, fmt.Errorf("config: push-allow: %w", err)
	}
	core, err := OpenCore(CoreOptions{
		DataDir: cfg.DataDir, Store: cfg.Store, PoolSize: cfg.StorePoolSize, RequireSyncReplica: cfg.RequireSyncReplica, LockTimeout: cfg.LockTimeout, BatchDelay: cfg.BatchDelay,
		AskRate: cfg.AskRate, MaxOpen: cfg.MaxOpenTasks, ReplyRate: cfg.ReplyRate, MaxReplies: cfg.MaxReplies,
		FlagHideThreshold: cfg.FlagHideThreshold, FlagRate: cfg.FlagRate, VoteRate: cfg.VoteRate,
		PushPolicy: policy, SigningKeyGrace: cfg.SigningKeyGrace,
	})
	if err != nil {
		return nil, err
	}
	obs.watch(core)
	s := &Server{cfg: cfg, log: log, core: core, broker: broker, obs: obs, serveErr: make(chan error, 8), grpcLn: grpcLn}
	if pg, ok := core.Store.(*postgres.DB); ok {
		s.watchReplication(pg)
	}
	if cfg.LogRetention > 0 {
		s.trimmer = changelog.NewTrimmer(core.Store, changelog.TrimmerOptions{Retention: cfg.LogRetention, Log: log})
	}
	if err := s.openPush(); err != nil {
		_ = core.Close()
		return nil, err
	}
	s.newLive()
	s.newFederation()
	if s.oauth, err = s.newOAuth(); err != nil {
		_ = core.Close()
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := s.openSearch(); err != nil {
		_ = core.Close()
		return nil, err
	}
	if err := s.openTLS(); err != nil {
		_ = s.closeSearch()
		_ = core.Close()
		return nil, err
	}
	h, err := s.publicHandler()
	if err != nil {
		_ = s.closeSearch()
		_ = core.Close()
		return nil, err
	}
	s.public = &http.Server{
		Handler:           obs.handler(h),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	s.serveTLS()
	s.admin = &http.Server{
		Handler:           core.AdminHandler(log, cfg.Version, cfg.DataDir, "server"),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

func perMinute(n int) *ratelimit.Limiter {
	if n <= 0 {
		return nil
	}
	return ratelimit.New(ratelimit.Config{Events: n, Per: time.Minute})
}

func (s *Server) publicHandler() (*router, error) {
	var mcpURL string
	if s.cfg.MCP {
		mcpURL = s.cfg.PublicURL + "/mcp"
	}
	var webSessions *sessions.Service
	if s.cfg.Web {
		webSessions = sessions.NewService(s.core.Store, s.core.Store, s.cfg.WebSessionTTL, time.Now)
	}
	tokens, policy := s.oauthDeps()
	webSignIn := s.newWebSignIn()
	svc, err := service.New(service.Config{
		PublicURL:         s.cfg.PublicURL,
		Version:           s.cfg.Version,
		ContributorWrites: s.cfg.ContributorWrites,
		MCPURL:            mcpURL,
		GRPCURL:           s.cfg.grpcURL(s.grpcLn),
		OAuth:             s.oauthState(),
	}, service.Deps{
		Tasks:       s.core.Tasks,
		Discussions: s.core.Discussions,
		Moderation:  s.core.Moderation,
		Trust:       s.core.Trust,
		Search:      s.index,
		SearchRate:  perMinute(s.cfg.SearchRate),
		Agents:      s.core.Agents,
		Records:     s.core.Records,
		Feed:        peers.NewFeed(s.core.Store, s.cfg.PublicURL),
		Peers:       s.core.Peers,
		Sessions:    webSessions,
		// Failed sign-ins of the web view share this budget.
		AuthFailures: perMinute(s.cfg.AuthFailRate),
		RequestRate:  perMinute(s.cfg.RequestRate),
		Events:       s.broker,
		Push:         s.pushService(),
		Signer:       s.core.Signer,
		AccessTokens: tokens,
		OAuth:        policy,
		WebSignIn:    webSignIn,
	})
	if err != nil {
		return nil, err
	}
	s.oauthServices = append(s.oauthServices, svc)
	if s.grpcLn != nil {
		s.grpc = s.newGRPC(svc)
	}
	rpc := jsonrpc.New(jsonrpc.Deps{
		Service:         svc,
		Log:             s.log,
		MaxBodyBytes:    s.cfg.MaxBodyBytes,
		StreamHeartbeat: s.cfg.StreamHeartbeat,
	})
	pages, err := s.webPages(svc)
	if err != nil {
		return nil, err
	}
	mcp, err := s.mcpHandlers(svc)
	if err != nil {
		return nil, err
	}
	sf := surfaces{
		discovery: discovery.New(discovery.Deps{Service: svc, Log: s.log, CardMaxAge: s.cfg.CardMaxAge, JWKS: s.core.Signer.JWKS}),
		health:    health{ready: s.readyCheck, log: s.log, seen: &readyState{}},
		a2a: httpjson.New(httpjson.Deps{Service: svc, Log: s.log, MaxBodyBytes: s.cfg.MaxBodyBytes,
			StreamHeartbeat: s.cfg.StreamHeartbeat}),
		jsonrpc: rpc,
		mcp:     mcp,
		api:     apiv1.New(apiv1.Deps{Service: svc, Log: s.log, PublicURL: s.cfg.PublicURL, MaxBodyBytes: s.cfg.MaxBodyBytes}),
	}
	var notFound http.Handler
	if pages != nil {
		p := pages.Pages()
		sf.web, notFound = &p, pages.NotFound()
		sf.signIn = webSignIn != nil
	}
	if s.cfg.MetricsAddr == "" {
		sf.metrics = s.obs.m.Handler()
	}
	rt := newRouter(routes(sf), s.log, notFound, web.WantsHTML)
	if s.oauth != nil {
		rt.resourceMetadata = svc.ResourceMetadataURL
	}
	return rt, nil
}

// readyCheck is nil when the process serves; otherwise a *notReady,
// whose public reason names no user, host or port.
func (s *Server) readyCheck() error {
	if !s.ready.Load() {
		return &notReady{Public: notReadyStarting}
	}
	if err := s.core.Store.Ping(); err != nil {
		return storeNotReady(err)
	}
	return nil
}

// Start listens on the public address and the admin socket and serves in
// the background. It returns once both accept connections.
func (s *Server) Start() error {
	ln, err := listen(s.cfg.Addr)
	if err != nil {
		return err
	}
	if s.tls != nil && s.tls.httpLn == nil {
		if s.tls.httpLn, err = listenACMEHTTP(s.cfg); err != nil {
			_ = ln.Close()
			return err
		}
	}
	return s.startOn(ln)
}

// listen opens the public listener. Its error names the address.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err // "bind: address already in use", without the address again
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// startOn is Start on a listener already open; it closes ln on failure.
func (s *Server) startOn(ln net.Listener) (err error) {
	s.ln = ln
	defer func() {
		if err != nil && s.tls != nil && s.tls.httpLn != nil {
			_ = s.tls.httpLn.Close()
		}
	}()
	// The live follower starts at the log's head before anything is
	// served: every change committed from now on reaches the streams,
	// the metrics and the credential cache.
	if err := s.startLive(); err != nil {
		_ = ln.Close()
		return err
	}
	if err := s.obs.start(s.serveErr); err != nil {
		_ = ln.Close()
		s.live.Stop()
		return err
	}
	if err := s.startPprof(); err != nil {
		_ = ln.Close()
		_ = s.obs.shutdown(context.Background())
		s.live.Stop()
		return err
	}
	if s.cfg.AdminSocket != "off" {
		adLn, err := admin.Listen(s.cfg.AdminSocket)
		if err != nil {
			_ = ln.Close()
			_ = s.obs.shutdown(context.Background())
			s.stopPprof()
			s.live.Stop()
			return err
		}
		s.adLn = adLn
		go func() { s.serveErr <- ignoreClosed(s.admin.Serve(adLn)) }()
	}
	go func() { s.serveErr <- ignoreClosed(s.servePublic(ln)) }()
	s.startTLS()
	s.startGRPC()
	s.index.Start(context.Background())
	s.fed.Start(context.Background())
	if s.trimmer != nil {
		s.trimmer.Start(context.Background())
	}
	if s.worker != nil {
		s.worker.Start(context.Background())
	}
	s.startOAuth(context.Background())
	s.ready.Store(true)
	s.log.Info("kfa serving", "addr", ln.Addr().String(), "public_url", s.cfg.PublicURL,
		"data", s.cfg.DataDir, "store", s.storeName(), "admin_socket", s.cfg.AdminSocket, "contributor_writes", s.cfg.ContributorWrites,
		"metrics_addr", s.MetricsAddr(), "grpc_addr", s.GRPCAddr(), "tls", s.tlsMode(), "version", s.cfg.Version)
	return nil
}

// storeName says which store serves, for the log: never the URL, which
// may hold a password.
func (s *Server) storeName() string {
	if s.core.DB != nil {
		return "bbolt"
	}
	return "postgresql"
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Addr is the address the public listener is bound to (useful with :0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the base URL of the public listener.
func (s *Server) URL() string {
	if s.tls != nil {
		return "https://" + s.Addr()
	}
	return "http://" + s.Addr()
}

// Core exposes the store and services (for tests and the benchmark).
func (s *Server) Core() *Core { return s.core }

// Handler is the public HTTP handler (for in-process fuzzing and tests).
func (s *Server) Handler() http.Handler { return s.public.Handler }

// OpenStreams is the number of task streams open now.
func (s *Server) OpenStreams() int { return s.broker.Open() }

// StreamOn returns a channel closed once a stream follows the task (for
// tests that must not move a task before its stream is in place).
func (s *Server) StreamOn(taskID string) <-chan struct{} { return s.broker.Watch(taskID) }

// Errors reports a listener that stopped on its own.
func (s *Server) Errors() <-chan error { return s.serveErr }

// Shutdown stops accepting, drains in-flight requests until ctx ends, then
// stops the search index (flushing it) and closes the store. Requests
// still running when ctx ends are cut off; their writes either committed
// or did not, never half.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	// Streams never go idle on their own: end them first, so draining the
	// listener waits only for ordinary requests.
	s.broker.Close()
	s.stopPprof()
	var errs []error
	if err := s.stopTLS(ctx); err != nil {
		errs = append(errs, err)
	}
	// The gRPC listener drains beside the public one, within the same
	// deadline.
	grpcStopped := make(chan error, 1)
	go func() { grpcStopped <- s.stopGRPC(ctx) }()
	if err := s.public.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("drain public listener: %w", err))
		_ = s.public.Close()
	}
	if err := <-grpcStopped; err != nil {
		errs = append(errs, err)
	}
	if s.adLn != nil {
		if err := s.admin.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("drain admin socket: %w", err))
			_ = s.admin.Close()
		}
		_ = os.Remove(s.cfg.AdminSocket)
	}
	if err := s.obs.shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	s.stopOAuth()
	if s.trimmer != nil {
		s.trimmer.Stop()
	}
	s.live.Stop()
	// The federation runtime writes to the store too.
	s.fed.Stop()
	// The delivery worker writes to the store: it stops before the store
	// closes. A delivery it was sending stays pending and is sent again.
	if s.worker != nil {
		s.worker.Stop()
	}
	if err := s.closeSearch(); err != nil {
		errs = append(errs, err)
	}
	if err := s.core.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run starts a server for cfg and serves until ctx is done, then shuts
// down within cfg.ShutdownTimeout.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	// Listen before anything touches the data directory, so that a busy
	// port leaves no new database (or directory) behind.
	ln, err := listen(cfg.Addr)
	if err != nil {
		return err
	}
	httpLn, err := listenACMEHTTP(cfg)
	if err != nil {
		_ = ln.Close()
		return err
	}
	s, err := New(cfg, log)
	if err != nil {
		_ = ln.Close()
		if httpLn != nil {
			_ = httpLn.Close()
		}
		return err
	}
	if s.tls != nil {
		s.tls.httpLn = httpLn
	}
	if err := s.startOn(ln); err != nil {
		_ = s.closeSearch()
		_ = s.core.Close()
		return err
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-s.serveErr:
		log.Error("listener stopped", "err", serveErr)
	}
	log.Info("shutting down", "timeout", s.cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	return errors.Join(serveErr, s.Shutdown(sctx))
}
