package grpcbinding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// serviceDesc is the generated A2AService description with every handler
// wrapped in the call's lifecycle (call.run): the generated handlers
// decode the request and call the Server's methods; the wrapper gives the
// call its request id, checks a2a-version, turns a message gRPC could not
// decode into the client's error, recovers a panic, maps every error once
// (service.ToError) into a google.rpc.Status with its metadata, and logs.
func (s *Server) serviceDesc() grpc.ServiceDesc {
	desc := a2apb.A2AService_ServiceDesc
	desc.Methods = append([]grpc.MethodDesc(nil), desc.Methods...)
	for i, m := range desc.Methods {
		h, name := m.Handler, m.MethodName
		desc.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var resp any
			err := s.run(ctx, name, func(ctx context.Context, c *call) error {
				var err error
				resp, err = h(srv, ctx, c.decoder(dec), nil)
				return err
			})
			return resp, err
		}
	}
	desc.Streams = append([]grpc.StreamDesc(nil), desc.Streams...)
	for i, sd := range desc.Streams {
		h, name := sd.Handler, sd.StreamName
		desc.Streams[i].Handler = func(srv any, ss grpc.ServerStream) error {
			return s.run(ss.Context(), name, func(ctx context.Context, c *call) error {
				return h(srv, &serverStream{ServerStream: ss, ctx: ctx, c: c})
			})
		}
	}
	return desc
}

// call is one call under way.
type call struct {
	s      *Server
	method string
}

// decoder wraps gRPC's decode of the request message: a message that
// could not be decoded is refused as the client's mistake, and so is a
// field sent with the wrong wire type. (What gRPC refuses itself, a
// message over the size limit, it has answered already.)
func (c *call) decoder(dec func(any) error) func(any) error {
	return func(v any) error {
		if err := dec(v); err != nil {
			return err
		}
		m, ok := v.(proto.Message)
		if !ok {
			return nil
		}
		if err := c.s.codec.decodeFailure(m); err != nil {
			return err
		}
		return checkWireTypes(m.ProtoReflect(), "")
	}
}

// serverStream is a stream in its call: its context carries the request
// id, and a request message it cannot decode is the client's mistake.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
	c   *call
}

func (ss *serverStream) Context() context.Context { return ss.ctx }

func (ss *serverStream) RecvMsg(m any) error {
	return ss.c.decoder(ss.ServerStream.RecvMsg)(m)
}

// run runs one call of method: op, between the lifecycle's steps.
func (s *Server) run(ctx context.Context, method string, op func(context.Context, *call) error) (err error) {
	start := time.Now()
	md, _ := metadata.FromIncomingContext(ctx)
	ctx, q := httpkit.BeginContext(ctx, first(md.Get("x-request-id")))
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-request-id", q.ID))
	c := &call{s: s, method: method}
	defer func() {
		if p := recover(); p != nil {
			s.deps.Log.Error("panic serving gRPC call", "request_id", q.ID, "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
		code := codes.OK
		if err != nil {
			code, err = s.answerError(ctx, q.ID, err)
		}
		trailer := metadata.MD{}
		if quota, ok := q.Quota.Quota(); ok {
			h := http.Header{}
			httpkit.SetRateLimitHeaders(h, quota)
			trailer = metadata.Join(trailer, headerMD(h))
		}
		if e, ok := a2a.AsError(err); ok {
			trailer = metadata.Join(trailer, errorMetadata(e, s.deps.Challenge))
		}
		if len(trailer) > 0 {
			_ = grpc.SetTrailer(ctx, trailer)
		}
		level := slog.LevelInfo
		if code == codes.Internal || code == codes.Unknown {
			level = slog.LevelError
		}
		s.deps.Log.LogAttrs(ctx, level, "grpc",
			slog.String("request_id", q.ID),
			slog.String("method", method),
			slog.String("code", code.String()),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", peerAddr(ctx)),
			slog.String("agent", q.Agent()),
		)
		if e, ok := a2a.AsError(err); ok {
			err = statusOf(e).Err()
		}
	}()
	if err := checkVersion(md); err != nil {
		return err
	}
	return op(ctx, c)
}

// answerError is err as the call's answer: an *a2a.Error (every error
// mapped once, by service.ToError), or a status gRPC made itself (a
// client that went away); a failure that is the server's is logged with
// the request id.
func (s *Server) answerError(ctx context.Context, requestID string, err error) (codes.Code, error) {
	if _, ok := a2a.AsError(err); !ok {
		if st, ok := status.FromError(err); ok {
			return st.Code(), err
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			st := status.FromContextError(ctx.Err())
			return st.Code(), st.Err()
		}
	}
	e := service.ToError(err)
	if e.Kind.HTTPStatus >= 500 {
		s.deps.Log.Error("gRPC call failed", "request_id", requestID, "err", err.Error())
	}
	return codeOf(e.Kind), e
}

// checkVersion applies a2a-version as the HTTP+JSON binding applies
// A2A-Version: 1.0 is served; an absent value means 0.3, which this
// service (lf.a2a.v1, a 1.0 proto) does not serve.
func checkVersion(md metadata.MD) error {
	v := first(md.Get("a2a-version"))
	switch nv := a2a.NormalizeVersion(v); {
	case nv == a2a.Version10:
		return nil
	case v == "":
		return a2a.Errorf(a2a.VersionNotSupported,
			"missing a2a-version metadata: an absent version means 0.3, which this gRPC service does not serve; send a2a-version: 1.0").
			With("supportedVersions", a2a.Version10)
	default:
		return a2a.Errorf(a2a.VersionNotSupported, "a2a-version %q is not supported here; send a2a-version: 1.0",
			httpkit.Truncate(v, 32)).With("supportedVersions", a2a.Version10)
	}
}

// caller resolves the call's credential through the service, read from
// the metadata as the HTTP bindings read the same headers
// (authorization: Bearer, x-api-key).
func (s *Server) caller(ctx context.Context, required bool) (service.Caller, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for _, k := range []string{"Authorization", httpkit.APIKeyHeader} {
		if v := md.Get(k); len(v) > 0 {
			h[http.CanonicalHeaderKey(k)] = v
		}
	}
	tok, sent, err := httpkit.HeaderCredential(h)
	c, err := s.deps.Service.Authenticate(ctx, service.Credential{Token: tok, Sent: sent, Err: err, Addr: peerAddr(ctx)}, required)
	if c.Agent != nil {
		httpkit.NoteAgent(ctx, c.Agent.ID)
	}
	return c, err
}

// peerAddr is the client's IP address, the key of per-address limits.
func peerAddr(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	a := p.Addr.String()
	if host, _, err := net.SplitHostPort(a); err == nil {
		return host
	}
	return strings.TrimSpace(a)
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
