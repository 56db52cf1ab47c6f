package server

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/kfa-project/kfa/grpcbinding"
	"github.com/kfa-project/kfa/oauth"
	"github.com/kfa-project/kfa/service"
)

// validateGRPC checks the gRPC listener's addresses.
func (c *Config) validateGRPC() error {
	if c.GRPCAddr != "" {
		if _, _, err := net.SplitHostPort(c.GRPCAddr); err != nil {
			return fmt.Errorf("grpc-addr: %q is not host:port: %w", c.GRPCAddr, err)
		}
	}
	if c.GRPCPublicAddr != "" {
		if c.GRPCAddr == "" {
			return fmt.Errorf("grpc-public-addr: set without grpc-addr, which turns the gRPC binding on")
		}
		if _, _, err := net.SplitHostPort(c.GRPCPublicAddr); err != nil {
			return fmt.Errorf("grpc-public-addr: %q is not host:port: %w", c.GRPCPublicAddr, err)
		}
	}
	return nil
}

// grpcURL is the gRPC interface's URL on the card: host:port, as gRPC
// clients dial it (the official SDKs take the interface URL as the dial
// target): GRPCPublicAddr, or the public URL's host with the port ln is
// bound to. "" when the binding is off.
func (c *Config) grpcURL(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	if c.GRPCPublicAddr != "" {
		return c.GRPCPublicAddr
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	host := "127.0.0.1"
	if u, err := url.Parse(c.PublicURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return net.JoinHostPort(host, port)
}

// listenGRPC opens the gRPC listener when the binding is on; nil when it
// is off. It is opened before anything else, so that the card names its
// port and a busy port leaves nothing behind.
func listenGRPC(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := listen(addr)
	if err != nil {
		return nil, fmt.Errorf("grpc-addr: %w", err)
	}
	return ln, nil
}

// newGRPC builds the gRPC binding over svc.
func (s *Server) newGRPC(svc *service.Service) *grpcbinding.Server {
	deps := grpcbinding.Deps{
		Service:         svc,
		Log:             s.log,
		MaxMessageBytes: int(s.cfg.MaxBodyBytes),
		MaxHeaderBytes:  s.cfg.MaxHeaderBytes,
	}
	if s.oauth != nil {
		// The same challenge as on HTTP: it points at the protected
		// resource metadata.
		deps.Challenge = func(c string) string {
			if u := svc.ResourceMetadataURL("/"); u != "" {
				return oauth.WithResourceMetadata(c, u)
			}
			return c
		}
	}
	if c := s.TLSConfig(); c != nil {
		// The public listener's certificates, renewed and reloaded alike.
		deps.Options = append(deps.Options, grpc.Creds(credentials.NewTLS(c)))
	}
	return grpcbinding.New(deps)
}

// startGRPC serves the gRPC binding, when it is on.
func (s *Server) startGRPC() {
	if s.grpc == nil {
		return
	}
	s.grpc.SetServing(true)
	go func() { s.serveErr <- s.grpc.Serve(s.grpcLn) }()
}

// stopGRPC drains the gRPC binding until ctx ends.
func (s *Server) stopGRPC(ctx context.Context) error {
	if s.grpc == nil {
		return nil
	}
	if err := s.grpc.Stop(ctx); err != nil {
		return fmt.Errorf("drain gRPC listener: %w", err)
	}
	return nil
}

// GRPCAddr is the address the gRPC listener is bound to, or "" when the
// binding is off.
func (s *Server) GRPCAddr() string {
	if s.grpcLn == nil {
		return ""
	}
	return s.grpcLn.Addr().String()
}
