package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/server"
)

// withGRPC turns the gRPC binding on, on a port of its own.
func withGRPC(c *server.Config) { c.GRPCAddr = "127.0.0.1:0" }

// grpcClient dials the server's gRPC binding with the generated client.
func (h *harness) grpcClient() a2apb.A2AServiceClient {
	h.t.Helper()
	return a2apb.NewA2AServiceClient(h.grpcConn())
}

func (h *harness) grpcConn() *grpc.ClientConn {
	h.t.Helper()
	addr := h.srv.GRPCAddr()
	if addr == "" {
		h.t.Fatal("the gRPC binding is off: start the server with withGRPC")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// grpcCtx is a call's context: a2a-version 1.0, and the token as a bearer
// when there is one; extra metadata pairs are added.
func grpcCtx(token string, extra ...string) (context.Context, context.CancelFunc) {
	md := metadata.Pairs(append([]string{"a2a-version", "1.0"}, extra...)...)
	if token != "" {
		md.Append("authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	return metadata.NewOutgoingContext(ctx, md), cancel
}

// toPB reads kfa's JSON of a request into its protobuf message, as a
// client that holds ProtoJSON would.
func toPB[M any, PM interface {
	*M
	proto.Message
}](t *testing.T, v any) PM {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m := PM(new(M))
	if err := protojson.Unmarshal(b, m); err != nil {
		t.Fatalf("%s as %T: %v", b, m, err)
	}
	return m
}

// grpcError is the A2A error a call ended with: its code and the reason
// of its ErrorInfo, which every A2A error carries (domain
// a2a-protocol.org); it fails the test on a status without one, or on an
// INTERNAL, which is never the client's mistake.
func grpcError(t *testing.T, err error) (codes.Code, *errdetails.ErrorInfo) {
	t.Helper()
	st, ok := grpcstatus.FromError(err)
	if !ok {
		t.Fatalf("not a gRPC status: %v", err)
	}
	if st.Code() == codes.Internal || st.Code() == codes.Unknown {
		t.Fatalf("%s for a client's call: %s", st.Code(), st.Message())
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.Domain != a2a.ErrorDomain {
				t.Fatalf("ErrorInfo domain %q", info.Domain)
			}
			return st.Code(), info
		}
	}
	t.Fatalf("%s %q without an ErrorInfo detail: %v", st.Code(), st.Message(), st.Details())
	return 0, nil
}

// grpcBinding is the gRPC binding for the scenario table
// (bindings_test.go), through the generated client.
type grpcBinding struct {
	t *testing.T
	c a2apb.A2AServiceClient
}

func (b grpcBinding) name() string { return "gRPC" }

// outcome is what a call came to; an error's code must be the one the
// HTTP+JSON binding names for the same error.
func (b grpcBinding) outcome(err error, ok func() outcome) outcome {
	b.t.Helper()
	if err != nil {
		code, info := grpcError(b.t, err)
		if want := a2aCode(info.Reason); want != code {
			b.t.Errorf("%s: code %s, want %s", info.Reason, code, want)
		}
		return outcome{kind: "error", reason: info.Reason}
	}
	return ok()
}

func taskOutcome(t *a2apb.Task) outcome {
	return outcome{kind: "task", state: t.GetStatus().GetState().String(), id: t.GetId()}
}

func (b grpcBinding) send(token string, req a2a.SendMessageRequest) outcome {
	ctx, cancel := grpcCtx(token)
	defer cancel()
	resp, err := b.c.SendMessage(ctx, toPB[a2apb.SendMessageRequest](b.t, req))
	return b.outcome(err, func() outcome {
		if t := resp.GetTask(); t != nil {
			return taskOutcome(t)
		}
		return outcome{kind: "message", state: resp.GetMessage().GetRole().String()}
	})
}

func (b grpcBinding) get(token, id string) outcome {
	ctx, cancel := grpcCtx(token)
	defer cancel()
	t, err := b.c.GetTask(ctx, &a2apb.GetTaskRequest{Id: id})
	return b.outcome(err, func() outcome { return taskOutcome(t) })
}

func (b grpcBinding) cancel(token, id string) outcome {
	ctx, cancel := grpcCtx(token)
	defer cancel()
	t, err := b.c.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: id})
	return b.outcome(err, func() outcome { return taskOutcome(t) })
}

func (b grpcBinding) list(token string) outcome {
	ctx, cancel := grpcCtx(token)
	defer cancel()
	size := int32(100)
	l, err := b.c.ListTasks(ctx, &a2apb.ListTasksRequest{PageSize: &size})
	return b.outcome(err, func() outcome { return outcome{kind: "list", total: int(l.GetTotalSize())} })
}

func (b grpcBinding) extendedCard(token string) outcome {
	ctx, cancel := grpcCtx(token)
	defer cancel()
	card, err := b.c.GetExtendedAgentCard(ctx, &a2apb.GetExtendedAgentCardRequest{})
	return b.outcome(err, func() outcome {
		raw, err := protojson.Marshal(card)
		if err != nil {
			b.t.Fatal(err)
		}
		return cardOutcome(b.t, raw)
	})
}

func (b grpcBinding) push(token, id string) outcome {
	ctx, cancel := grpcCtx(token)
	defer cancel()
	l, err := b.c.ListTaskPushNotificationConfigs(ctx, &a2apb.ListTaskPushNotificationConfigsRequest{TaskId: id})
	return b.outcome(err, func() outcome {
		raw, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(l)
		if err != nil {
			b.t.Fatal(err)
		}
		return configsOutcome(b.t, raw)
	})
}

// a2aCode is the gRPC code of an A2A error reason: the google.rpc.Code
// the spec's table (v1.0.1) gives it, which the HTTP+JSON binding names in
// its error body too.
func a2aCode(reason string) codes.Code {
	switch reason {
	case "TASK_NOT_FOUND", "NOT_FOUND":
		return codes.NotFound
	case "TASK_NOT_CANCELABLE", "PUSH_NOTIFICATION_NOT_SUPPORTED", "UNSUPPORTED_OPERATION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
		"EXTENSION_SUPPORT_REQUIRED", "VERSION_NOT_SUPPORTED":
		return codes.FailedPrecondition
	case "CONTENT_TYPE_NOT_SUPPORTED", "INVALID_PARAMS", "INVALID_REQUEST", "PARSE_ERROR":
		return codes.InvalidArgument
	case "UNAUTHENTICATED":
		return codes.Unauthenticated
	case "INSUFFICIENT_SCOPE":
		return codes.PermissionDenied
	case "RATE_LIMITED", "PAYLOAD_TOO_LARGE":
		return codes.ResourceExhausted
	case "UNAVAILABLE":
		return codes.Unavailable
	}
	return codes.Internal
}

// defaultWait bounds one call of a test: a guard, not a measure.
const defaultWait = 30 * time.Second

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
