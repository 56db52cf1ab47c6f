package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kfa-project/kfa/server"
)

// rawCodec sends a request's bytes as they are, so a test can send what
// no generated client would.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*(v.(*[]byte)) = data.Materialize()
	return nil
}

// grpcBadCase is one call that must be refused with code and reason ("":
// a refusal of gRPC's own, which carries no ErrorInfo).
type grpcBadCase struct {
	name   string
	method string   // of lf.a2a.v1.A2AService
	md     []string // metadata pairs; nil: a2a-version 1.0 and the test's token
	body   []byte
	code   codes.Code
	reason string
}

func mustProto(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGRPCBadInput is the bad-input and hostile-input tables of HTTP
// (badinput_test.go, hostile_test.go) over gRPC, with what only protobuf
// can get wrong: bytes that are no message, a field of the wrong wire
// type, invalid UTF-8, a Value of no kind, nesting past any bound, a
// message over the size limit. Each call gets its code and ErrorInfo
// reason, never INTERNAL, and the store stays as it was. A field number
// the message does not have is ignored, as the spec asks.
func TestGRPCBadInput(t *testing.T) {
	h := start(t, func(c *server.Config) { withGRPC(c); c.MaxBodyBytes = 64 << 10 })
	alice, ac := h.agent("alice")
	reader, _ := h.agent("reader", "read")
	revoked, _ := h.agent("mallory")
	if _, err := h.admin.RevokeAgent(bg(), revoked.ID); err != nil {
		t.Fatal(err)
	}
	_, bc := h.agent("bob")
	mine := h.ask(ac, "a1", "how do I rotate logs?")
	theirs := h.ask(bc, "b1", "bob's question")
	done := h.ask(ac, "a2", "answered question")
	if _, err := bc.Reply(bg(), discussionOf(t, done), "answer"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		h.ask(ac, fmt.Sprintf("a%d", i+3), "more")
	}
	page, err := ac.ListTasks(bg(), map[string][]string{"pageSize": {"1"}})
	if err != nil || page.NextPageToken == "" {
		t.Fatalf("need a page token: %+v %v", page, err)
	}

	text := func(s string) *a2apb.Part { return &a2apb.Part{Content: &a2apb.Part_Text{Text: s}} }
	data := func(v *structpb.Value) *a2apb.Part { return &a2apb.Part{Content: &a2apb.Part_Data{Data: v}} }
	obj := func(kv map[string]any) *structpb.Value {
		s, err := structpb.NewStruct(kv)
		if err != nil {
			t.Fatal(err)
		}
		return structpb.NewStructValue(s)
	}
	msg := func(m *a2apb.Message, returnNow bool) []byte {
		if m.Role == 0 {
			m.Role = a2apb.Role_ROLE_USER
		}
		if m.MessageId == "" {
			m.MessageId = "g1"
		}
		req := &a2apb.SendMessageRequest{Message: m}
		if returnNow {
			req.Configuration = &a2apb.SendMessageConfiguration{ReturnImmediately: true}
		}
		return mustProto(t, req)
	}
	ask := func(kv map[string]any) []byte {
		kv["action"] = "ask"
		return msg(&a2apb.Message{MessageId: "g-ask", Parts: []*a2apb.Part{data(obj(kv))}}, true)
	}
	deep := func(levels int) *structpb.Struct {
		v := structpb.NewNumberValue(1)
		for range levels - 1 {
			v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"a": v}})
		}
		return &structpb.Struct{Fields: map[string]*structpb.Value{"a": v}}
	}
	search := msg(&a2apb.Message{Parts: []*a2apb.Part{text("bbolt timeout")}}, false)
	// A field of the wrong wire type: SendMessageRequest.message (2, a
	// message) as a number; Message.message_id (1, a string) as a number.
	wrongMessage := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 7)
	inner := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7)
	inner = append(inner, mustProto(t, &a2apb.Message{Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{text("x")}})...)
	wrongID := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), inner)
	badUTF8 := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("a\xffb"))
	badUTF8 = protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), badUTF8)
	manyParts := make([]*a2apb.Part, 17)
	for i := range manyParts {
		manyParts[i] = text("x")
	}
	bigText := msg(&a2apb.Message{Parts: []*a2apb.Part{text(strings.Repeat("x", 70<<10))}}, false)
	nan := msg(&a2apb.Message{Parts: []*a2apb.Part{data(obj(map[string]any{"action": "search", "query": "x", "limit": math.NaN()}))}}, false)
	size0, size101, minus := int32(0), int32(101), int32(-1)
	pageToken := func(tok string, status a2apb.TaskState) []byte {
		return mustProto(t, &a2apb.ListTasksRequest{PageToken: tok, Status: status})
	}
	flipped := flipChar(page.NextPageToken, 5)
	v := func(version string) []string {
		return []string{"a2a-version", version, "authorization", "Bearer " + alice.Token}
	}

	cases := []grpcBadCase{
		{"bytes that are no message", "SendMessage", nil, []byte{0xff, 0xff, 0xff}, codes.InvalidArgument, "PARSE_ERROR"},
		{"truncated message", "SendMessage", nil, search[:len(search)-3], codes.InvalidArgument, "PARSE_ERROR"},
		{"invalid UTF-8 in a string", "SendMessage", nil, badUTF8, codes.InvalidArgument, "PARSE_ERROR"},
		{"message of the wrong wire type", "SendMessage", nil, wrongMessage, codes.InvalidArgument, "INVALID_PARAMS"},
		{"messageId of the wrong wire type", "SendMessage", nil, wrongID, codes.InvalidArgument, "INVALID_PARAMS"},
		{"over the size limit", "SendMessage", nil, bigText, codes.ResourceExhausted, ""},
		{"metadata nested past the JSON bound", "SendMessage", nil, msg(&a2apb.Message{Metadata: deep(65), Parts: []*a2apb.Part{text("x")}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"metadata nested past any bound", "SendMessage", nil, msg(&a2apb.Message{Metadata: deep(400), Parts: []*a2apb.Part{text("x")}}, false), codes.InvalidArgument, "PARSE_ERROR"},
		{"data part of no kind", "SendMessage", nil, msg(&a2apb.Message{Parts: []*a2apb.Part{data(&structpb.Value{})}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"NaN in a data part", "SendMessage", nil, nan, codes.InvalidArgument, "INVALID_PARAMS"},
		{"data part not an object", "SendMessage", nil, msg(&a2apb.Message{Parts: []*a2apb.Part{data(structpb.NewListValue(&structpb.ListValue{}))}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"part with no content", "SendMessage", nil, msg(&a2apb.Message{Parts: []*a2apb.Part{{}}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"seventeen parts", "SendMessage", nil, msg(&a2apb.Message{Parts: manyParts}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"no message", "SendMessage", nil, nil, codes.InvalidArgument, "INVALID_PARAMS"},
		{"role of no name", "SendMessage", nil, msg(&a2apb.Message{Role: 7, Parts: []*a2apb.Part{text("x")}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"agent role", "SendMessage", nil, msg(&a2apb.Message{Role: a2apb.Role_ROLE_AGENT, Parts: []*a2apb.Part{text("x")}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"url part", "SendMessage", nil, msg(&a2apb.Message{Parts: []*a2apb.Part{{Content: &a2apb.Part_Url{Url: "http://x"}}}}, false), codes.InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"raw part", "SendMessage", nil, msg(&a2apb.Message{Parts: []*a2apb.Part{{Content: &a2apb.Part_Raw{Raw: []byte{1}}}}}, false), codes.InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"message id too long", "SendMessage", nil, msg(&a2apb.Message{MessageId: strings.Repeat("m", 129), Parts: []*a2apb.Part{data(obj(map[string]any{"action": "ask", "question": "q"}))}}, true), codes.InvalidArgument, "INVALID_PARAMS"},
		{"details too long", "SendMessage", nil, ask(map[string]any{"question": "q", "details": strings.Repeat("d", 20001)}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"question with a C1 control", "SendMessage", nil, ask(map[string]any{"question": "a\u0085b"}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"skill not a string", "SendMessage", nil, msg(&a2apb.Message{Parts: []*a2apb.Part{data(obj(map[string]any{"skill": []any{"knowledge-search"}}))}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"unknown skill in metadata", "SendMessage", nil, msg(&a2apb.Message{Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{"skill": structpb.NewStringValue("rm -rf")}}, Parts: []*a2apb.Part{text("x")}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"limit out of range", "SendMessage", nil, msg(&a2apb.Message{Parts: []*a2apb.Part{data(obj(map[string]any{"action": "search", "query": "x", "limit": 9}))}}, false), codes.InvalidArgument, "INVALID_PARAMS"},
		{"ask without returnImmediately", "SendMessage", nil, msg(&a2apb.Message{MessageId: "g-ask", Parts: []*a2apb.Part{data(obj(map[string]any{"action": "ask", "question": "q"}))}}, false), codes.FailedPrecondition, "UNSUPPORTED_OPERATION"},
		{"ask with the read scope", "SendMessage", []string{"a2a-version", "1.0", "authorization", "Bearer " + reader.Token}, ask(map[string]any{"question": "q"}), codes.PermissionDenied, "INSUFFICIENT_SCOPE"},
		{"ask anonymously", "SendMessage", []string{"a2a-version", "1.0"}, ask(map[string]any{"question": "q"}), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"revoked agent asks", "SendMessage", []string{"a2a-version", "1.0", "authorization", "Bearer " + revoked.Token}, ask(map[string]any{"question": "q"}), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"no a2a-version", "GetTask", []string{"authorization", "Bearer " + alice.Token}, mustProto(t, &a2apb.GetTaskRequest{Id: mine.ID}), codes.FailedPrecondition, "VERSION_NOT_SUPPORTED"},
		{"a2a-version 2.0", "GetTask", v("2.0"), mustProto(t, &a2apb.GetTaskRequest{Id: mine.ID}), codes.FailedPrecondition, "VERSION_NOT_SUPPORTED"},
		{"a2a-version 0.3", "SendMessage", v("0.3"), search, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED"},
		{"Basic credential", "GetTask", []string{"a2a-version", "1.0", "authorization", "Basic eDp5"}, mustProto(t, &a2apb.GetTaskRequest{Id: mine.ID}), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"two different tokens", "GetTask", []string{"a2a-version", "1.0", "authorization", "Bearer " + alice.Token, "x-api-key", revoked.Token}, mustProto(t, &a2apb.GetTaskRequest{Id: mine.ID}), codes.InvalidArgument, "INVALID_REQUEST"},
		{"unknown token", "GetTask", []string{"a2a-version", "1.0", "x-api-key", "kfa_" + strings.Repeat("a", 52)}, mustProto(t, &a2apb.GetTaskRequest{Id: mine.ID}), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"get anonymously", "GetTask", []string{"a2a-version", "1.0"}, mustProto(t, &a2apb.GetTaskRequest{Id: mine.ID}), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"get without an id", "GetTask", nil, mustProto(t, &a2apb.GetTaskRequest{}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"get foreign", "GetTask", nil, mustProto(t, &a2apb.GetTaskRequest{Id: theirs.ID}), codes.NotFound, "TASK_NOT_FOUND"},
		{"get with negative history", "GetTask", nil, mustProto(t, &a2apb.GetTaskRequest{Id: mine.ID, HistoryLength: &minus}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"cancel foreign", "CancelTask", nil, mustProto(t, &a2apb.CancelTaskRequest{Id: theirs.ID}), codes.NotFound, "TASK_NOT_FOUND"},
		{"cancel completed", "CancelTask", nil, mustProto(t, &a2apb.CancelTaskRequest{Id: done.ID}), codes.FailedPrecondition, "TASK_NOT_CANCELABLE"},
		{"cancel with deep metadata", "CancelTask", nil, mustProto(t, &a2apb.CancelTaskRequest{Id: mine.ID, Metadata: deep(70)}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"list with an unknown status", "ListTasks", nil, mustProto(t, &a2apb.ListTasksRequest{Status: 99}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"list page size 0", "ListTasks", nil, mustProto(t, &a2apb.ListTasksRequest{PageSize: &size0}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"list page size 101", "ListTasks", nil, mustProto(t, &a2apb.ListTasksRequest{PageSize: &size101}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"list with an invalid timestamp", "ListTasks", nil, mustProto(t, &a2apb.ListTasksRequest{StatusTimestampAfter: &timestamppb.Timestamp{Seconds: math.MaxInt64}}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"list with a long context id", "ListTasks", nil, mustProto(t, &a2apb.ListTasksRequest{ContextId: strings.Repeat("c", 200)}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"forged page token", "ListTasks", nil, pageToken(flipped, 0), codes.InvalidArgument, "INVALID_PARAMS"},
		{"page token with other filters", "ListTasks", nil, pageToken(page.NextPageToken, a2apb.TaskState_TASK_STATE_WORKING), codes.InvalidArgument, "INVALID_PARAMS"},
		{"page token very long", "ListTasks", nil, pageToken(strings.Repeat("A", 2000), 0), codes.InvalidArgument, "INVALID_PARAMS"},
		{"push config of a foreign task", "CreateTaskPushNotificationConfig", nil, mustProto(t, &a2apb.TaskPushNotificationConfig{TaskId: theirs.ID, Url: "https://example.com/h"}), codes.NotFound, "TASK_NOT_FOUND"},
		{"push config to loopback", "CreateTaskPushNotificationConfig", nil, mustProto(t, &a2apb.TaskPushNotificationConfig{TaskId: mine.ID, Url: "http://127.0.0.1/h"}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"push config without a task", "CreateTaskPushNotificationConfig", nil, mustProto(t, &a2apb.TaskPushNotificationConfig{Url: "https://example.com/h"}), codes.InvalidArgument, "INVALID_PARAMS"},
		{"push config missing", "GetTaskPushNotificationConfig", nil, mustProto(t, &a2apb.GetTaskPushNotificationConfigRequest{TaskId: mine.ID, Id: "nope"}), codes.NotFound, "TASK_NOT_FOUND"},
		{"subscribe to a completed task", "SubscribeToTask", nil, mustProto(t, &a2apb.SubscribeToTaskRequest{Id: done.ID}), codes.FailedPrecondition, "UNSUPPORTED_OPERATION"},
		{"subscribe to a foreign task", "SubscribeToTask", nil, mustProto(t, &a2apb.SubscribeToTaskRequest{Id: theirs.ID}), codes.NotFound, "TASK_NOT_FOUND"},
		{"stream bytes that are no message", "SendStreamingMessage", nil, []byte{0x0a, 0xff}, codes.InvalidArgument, "PARSE_ERROR"},
		{"stream over the size limit", "SendStreamingMessage", nil, bigText, codes.ResourceExhausted, ""},
		{"extended card with a bad token", "GetExtendedAgentCard", []string{"a2a-version", "1.0", "authorization", "Bearer kfa_nope"}, nil, codes.Unauthenticated, "UNAUTHENTICATED"},
	}
	conn := h.grpcConn()
	before := h.digest()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			md := tc.md
			if md == nil {
				md = v("1.0")
			}
			var trailer metadata.MD
			err := invokeRaw(conn, tc.method, md, tc.body, &trailer)
			if err == nil {
				t.Fatal("accepted")
			}
			if tc.reason == "" {
				// gRPC's own refusal, before the message is read: its
				// code and the limit, no A2A detail.
				if st, _ := grpcstatus.FromError(err); st.Code() != tc.code || !strings.Contains(st.Message(), "larger than max") {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			code, info := grpcError(t, err)
			if code != tc.code || info.Reason != tc.reason {
				t.Fatalf("got %s %s, want %s %s: %v", code, info.Reason, tc.code, tc.reason, err)
			}
			if code == codes.Unauthenticated && !strings.HasPrefix(first(trailer.Get("www-authenticate")), "Bearer ") {
				t.Fatalf("UNAUTHENTICATED without a Bearer challenge: %v", trailer)
			}
			if after := h.digest(); after != before {
				t.Fatal("the store changed")
			}
		})
	}

	// A field number SendMessageRequest does not have is ignored (a newer
	// client's field), and the call is answered as without it.
	unknown := protowire.AppendBytes(protowire.AppendTag(append([]byte{}, search...), 99, protowire.BytesType), []byte("future"))
	var plain, extra []byte
	if err := invokeRawOut(conn, "SendMessage", v("1.0"), search, &plain); err != nil {
		t.Fatal(err)
	}
	if err := invokeRawOut(conn, "SendMessage", v("1.0"), unknown, &extra); err != nil {
		t.Fatalf("a field number the message does not have: %v", err)
	}
	var a, b a2apb.SendMessageResponse
	if proto.Unmarshal(plain, &a) != nil || proto.Unmarshal(extra, &b) != nil || a.GetMessage() == nil ||
		len(a.GetMessage().GetParts()) != len(b.GetMessage().GetParts()) {
		t.Fatalf("answered differently: %v / %v", &a, &b)
	}
	if h.digest() != before {
		t.Fatal("a search changed the store")
	}
}

// invokeRaw calls method with body as its request message.
func invokeRaw(conn *grpc.ClientConn, method string, md []string, body []byte, trailer *metadata.MD) error {
	var out []byte
	return invokeCall(conn, method, md, body, &out, grpc.Trailer(trailer))
}

func invokeRawOut(conn *grpc.ClientConn, method string, md []string, body []byte, out *[]byte) error {
	return invokeCall(conn, method, md, body, out)
}

func invokeCall(conn *grpc.ClientConn, method string, md []string, body []byte, out *[]byte, opts ...grpc.CallOption) error {
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), metadata.Pairs(md...)), defaultWait)
	defer cancel()
	full := "/lf.a2a.v1.A2AService/" + method
	if body == nil {
		body = []byte{}
	}
	opts = append(opts, grpc.ForceCodecV2(rawCodec{}))
	if strings.Contains(method, "Streaming") || method == "SubscribeToTask" {
		st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, full, opts...)
		if err != nil {
			return err
		}
		if err := st.SendMsg(body); err != nil {
			return err
		}
		if err := st.CloseSend(); err != nil {
			return err
		}
		for {
			if err := st.RecvMsg(out); err != nil {
				if t := st.Trailer(); len(t) > 0 {
					for _, o := range opts {
						if to, ok := o.(grpc.TrailerCallOption); ok {
							*to.TrailerAddr = t
						}
					}
				}
				return err
			}
		}
	}
	return conn.Invoke(ctx, full, body, out, opts...)
}
