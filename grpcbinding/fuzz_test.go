package grpcbinding_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/kfa-project/kfa/server"
)

// fuzzConn is one server with the gRPC binding per fuzzing process, and a
// connection to it, made on first use.
var fuzzConn = sync.OnceValues(func() (*grpc.ClientConn, error) {
	dir, err := os.MkdirTemp("", "kfa-grpc-fuzz-")
	if err != nil {
		return nil, err
	}
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.AdminSocket = "off"
	cfg.AskRate, cfg.MaxOpenTasks, cfg.SearchRate, cfg.AuthFailRate, cfg.RequestRate = 0, 0, 0, 0, 0
	cfg.BatchDelay = time.Millisecond
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	return grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
})

// rawCodec sends the fuzzer's bytes as the request message.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*(v.(*[]byte)) = data.Materialize()
	return nil
}

// FuzzSendMessageBytes sends any bytes as a SendMessage request: the
// server never panics and never answers INTERNAL or UNKNOWN, which are
// never the client's mistake.
func FuzzSendMessageBytes(f *testing.F) {
	for _, m := range []proto.Message{
		&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "bbolt timeout"}}}}},
		&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Data{}}}}},
		&a2apb.SendMessageRequest{Configuration: &a2apb.SendMessageConfiguration{TaskPushNotificationConfig: &a2apb.TaskPushNotificationConfig{Url: "x"}}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xff, 0x01})
	f.Add([]byte{0x12, 0x02, 0x08})
	f.Fuzz(func(t *testing.T, body []byte) {
		conn, err := fuzzConn()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0"), 30*time.Second)
		defer cancel()
		var out []byte
		err = conn.Invoke(ctx, "/lf.a2a.v1.A2AService/SendMessage", body, &out, grpc.ForceCodecV2(rawCodec{}))
		if c := status.Code(err); c == codes.Internal || c == codes.Unknown {
			t.Fatalf("%s for %x: %v", c, body, err)
		}
	})
}
