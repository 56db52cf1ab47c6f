package grpcbinding

import (
	"context"
	"log/slog"
	"net"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	"github.com/kfa-project/kfa/service"
)

// Deps are what the binding needs.
type Deps struct {
	// Service runs every operation, and authenticates the callers.
	Service *service.Service
	Log     *slog.Logger
	// MaxMessageBytes bounds a request message (kfa serve's
	// --max-body-bytes, the same bound as the HTTP bindings' bodies);
	// gRPC refuses a larger one with RESOURCE_EXHAUSTED before reading
	// it. Default 256 KiB.
	MaxMessageBytes int
	// MaxHeaderBytes bounds a call's metadata (--max-header-bytes).
	// Default 16 KiB.
	MaxHeaderBytes int
	// Challenge, when set, rewrites a Bearer challenge before it is sent
	// (the server adds OAuth's resource_metadata to it, as it does on
	// HTTP).
	Challenge func(challenge string) string
	// Options are added to the gRPC server's: a TLS helper passes
	// grpc.Creds here (or serves on a TLS listener whose NextProtos has
	// "h2").
	Options []grpc.ServerOption
}

// The transport's bounds. A stream's unsent data is bounded by gRPC
// itself (64 KiB a stream, and a connection stops reading new frames
// while it cannot write), so a client that holds streams without reading
// holds at most MaxConcurrentStreams of them on a connection; keepalive
// pings that go unanswered (a client that reads nothing answers none)
// close the connection.
const (
	maxConcurrentStreams = 100
	keepaliveTime        = time.Minute
	keepaliveTimeout     = 20 * time.Second
	// clientPingMin is how often a client may ping; more often is an
	// abuse, answered by closing the connection (gRPC's own rule).
	clientPingMin = 10 * time.Second
)

// Server is the A2A gRPC service (lf.a2a.v1.A2AService) on a grpc.Server,
// with the standard health service and server reflection. Build it with
// New, then Serve.
type Server struct {
	a2apb.UnimplementedA2AServiceServer
	deps   Deps
	grpc   *grpc.Server
	health *health.Server
	codec  *codec
}

// New returns the server, not yet serving; the health service says
// NOT_SERVING until SetServing(true).
func New(deps Deps) *Server {
	if deps.MaxMessageBytes <= 0 {
		deps.MaxMessageBytes = 256 << 10
	}
	if deps.MaxHeaderBytes <= 0 {
		deps.MaxHeaderBytes = 16 << 10
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{deps: deps, health: health.NewServer(), codec: &codec{}}
	opts := append([]grpc.ServerOption{
		grpc.ForceServerCodecV2(s.codec),
		grpc.MaxRecvMsgSize(deps.MaxMessageBytes),
		grpc.MaxHeaderListSize(uint32(deps.MaxHeaderBytes)),
		grpc.MaxConcurrentStreams(maxConcurrentStreams),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: keepaliveTime, Timeout: keepaliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: clientPingMin, PermitWithoutStream: true}),
	}, deps.Options...)
	s.grpc = grpc.NewServer(opts...)
	desc := s.serviceDesc()
	s.grpc.RegisterService(&desc, s)
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.SetServing(false)
	return s
}

// ServiceName is the A2A service's full name, as the health service and
// reflection name it.
const ServiceName = "lf.a2a.v1.A2AService"

// SetServing says through the health service whether the server takes
// calls (the server's readiness), for the whole server ("") and for the
// A2A service.
func (s *Server) SetServing(on bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if on {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.health.SetServingStatus("", st)
	s.health.SetServingStatus(ServiceName, st)
}

// Serve accepts connections on ln until Stop. ln may be a TLS listener.
func (s *Server) Serve(ln net.Listener) error {
	err := s.grpc.Serve(ln)
	if err == grpc.ErrServerStopped {
		return nil
	}
	return err
}

// Stop says NOT_SERVING, stops accepting, and waits for the calls under
// way until ctx ends, then cuts the rest off. Streams end first on their
// own when the server closes its stream broker, as on HTTP.
func (s *Server) Stop(ctx context.Context) error {
	s.health.Shutdown()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
		return ctx.Err()
	}
}
