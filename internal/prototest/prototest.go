// Package prototest checks kfa's JSON against the normative A2A proto
// (lf.a2a.v1, via the official Go SDK's generated types): ProtoJSON is
// strict about field names, enum spellings and shapes, so a value that
// parses here is spec-valid on the wire. Only tests import this package.
package prototest

import (
	"testing"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Message names accepted by Valid.
const (
	Task                = "Task"
	Message             = "Message"
	AgentCard           = "AgentCard"
	SendMessageRequest  = "SendMessageRequest"
	SendMessageResponse = "SendMessageResponse"
	ListTasksResponse   = "ListTasksResponse"
	StreamResponse      = "StreamResponse"
)

func newMessage(name string) proto.Message {
	switch name {
	case Task:
		return &pb.Task{}
	case Message:
		return &pb.Message{}
	case AgentCard:
		return &pb.AgentCard{}
	case SendMessageRequest:
		return &pb.SendMessageRequest{}
	case SendMessageResponse:
		return &pb.SendMessageResponse{}
	case ListTasksResponse:
		return &pb.ListTasksResponse{}
	case StreamResponse:
		return &pb.StreamResponse{}
	}
	return nil
}

// Valid fails t unless data is valid ProtoJSON for the named A2A message,
// with no unknown fields.
func Valid(t testing.TB, name string, data []byte) {
	t.Helper()
	m := newMessage(name)
	if m == nil {
		t.Fatalf("prototest: unknown message %q", name)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(data, m); err != nil {
		t.Fatalf("not valid ProtoJSON for lf.a2a.v1.%s: %v\n%s", name, err, data)
	}
}
