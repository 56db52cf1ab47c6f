package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kfa-project/kfa/server"
)

func grpcAskReq(t *testing.T, id, question string) *a2apb.SendMessageRequest {
	t.Helper()
	s, err := structpb.NewStruct(map[string]any{"action": "ask", "question": question})
	if err != nil {
		t.Fatal(err)
	}
	return &a2apb.SendMessageRequest{
		Message: &a2apb.Message{MessageId: id, Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Data{Data: structpb.NewStructValue(s)}}}},
		Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: true},
	}
}

// TestGRPCLimitsAndMetadata: the limits decided in the service answer
// RESOURCE_EXHAUSTED with RetryInfo and retry-after metadata, as HTTP
// answers 429 with Retry-After; every authenticated call carries the
// RateLimit fields; a refused credential or scope carries the Bearer
// challenge; x-api-key works as authorization does; a retried messageId
// gets the first task back; the request id comes back in the header.
func TestGRPCLimitsAndMetadata(t *testing.T) {
	h := start(t, func(c *server.Config) { withGRPC(c); c.AskRate = 2 })
	alice, _ := h.agent("alice")
	reader, _ := h.agent("reader", "read")
	c := h.grpcClient()

	call := func(token string, req *a2apb.SendMessageRequest, extra ...string) (*a2apb.SendMessageResponse, metadata.MD, metadata.MD, error) {
		ctx, cancel := grpcCtx(token, extra...)
		defer cancel()
		var header, trailer metadata.MD
		resp, err := c.SendMessage(ctx, req, grpc.Header(&header), grpc.Trailer(&trailer))
		return resp, header, trailer, err
	}
	asked, header, trailer, err := call(alice.Token, grpcAskReq(t, "lim-1", "first"), "x-request-id", "req-42")
	if err != nil {
		t.Fatal(err)
	}
	if got := first(header.Get("x-request-id")); got != "req-42" {
		t.Errorf("x-request-id %q", got)
	}
	if trailer.Get("ratelimit-limit") == nil || trailer.Get("ratelimit-policy") == nil {
		t.Errorf("an authenticated call without the RateLimit fields: %v", trailer)
	}
	again, _, _, err := call(alice.Token, grpcAskReq(t, "lim-1", "first, again"))
	if err != nil || again.GetTask().GetId() != asked.GetTask().GetId() {
		t.Fatalf("a retried messageId: %v %v, want task %s", again, err, asked.GetTask().GetId())
	}
	if _, _, _, err := call(alice.Token, grpcAskReq(t, "lim-2", "second")); err != nil {
		t.Fatal(err)
	}
	before := h.digest()
	_, _, trailer, err = call(alice.Token, grpcAskReq(t, "lim-3", "third, over the rate"))
	code, info := grpcError(t, err)
	if code != codes.ResourceExhausted || info.Reason != "RATE_LIMITED" {
		t.Fatalf("over the ask rate: %s %s", code, info.Reason)
	}
	if n, err := strconv.Atoi(first(trailer.Get("retry-after"))); err != nil || n < 1 {
		t.Fatalf("retry-after %v", trailer.Get("retry-after"))
	}
	var retry *errdetails.RetryInfo
	st, _ := grpcstatus.FromError(err)
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Fatalf("no RetryInfo: %v", st.Details())
	}
	if h.digest() != before {
		t.Fatal("a refused ask changed the store")
	}

	// x-api-key is the same credential as authorization: Bearer.
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(),
		metadata.Pairs("a2a-version", "1.0", "x-api-key", alice.Token)), defaultWait)
	defer cancel()
	if got, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Id: asked.GetTask().GetId()}); err != nil || got.GetId() != asked.GetTask().GetId() {
		t.Fatalf("GetTask with x-api-key: %v %v", got, err)
	}

	// The challenges.
	_, _, trailer, err = call(reader.Token, grpcAskReq(t, "lim-4", "without post"))
	if code, _ := grpcError(t, err); code != codes.PermissionDenied ||
		!strings.Contains(first(trailer.Get("www-authenticate")), `error="insufficient_scope", scope="post"`) {
		t.Fatalf("PERMISSION_DENIED: %v %v", err, trailer)
	}
	_, _, trailer, err = call("", grpcAskReq(t, "lim-5", "anonymous"))
	if code, _ := grpcError(t, err); code != codes.Unauthenticated || first(trailer.Get("www-authenticate")) != `Bearer realm="kfa"` {
		t.Fatalf("UNAUTHENTICATED without a credential: %v %v", err, trailer)
	}
}

// TestGRPCHealthAndReflection: the standard health service says SERVING
// for the server and the A2A service, and reflection lists the service
// and describes it, as grpcurl and load balancers use them.
func TestGRPCHealthAndReflection(t *testing.T) {
	h := start(t, withGRPC)
	conn := h.grpcConn()
	ctx, cancel := context.WithTimeout(context.Background(), defaultWait)
	defer cancel()
	for _, svc := range []string{"", "lf.a2a.v1.A2AService"} {
		res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health of %q: %v %v", svc, res, err)
		}
	}
	st, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	res, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range res.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"lf.a2a.v1.A2AService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("reflection lists %v, not %s", names, want)
		}
	}
	if err := st.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{
		FileContainingSymbol: "lf.a2a.v1.A2AService"}}); err != nil {
		t.Fatal(err)
	}
	if res, err := st.Recv(); err != nil || len(res.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Fatalf("the service's descriptor: %v %v", res, err)
	}
}
