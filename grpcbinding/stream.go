package grpcbinding

import (
	"context"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"

	"github.com/kfa-project/kfa/service"
)

// A gRPC stream has no event ids (StreamResponse has no field for one),
// so there is no Last-Event-ID to resume after: a client that lost its
// stream subscribes again (SubscribeToTask starts with the task as it is)
// or reads the task, and the services' streams are opened with no id.

// SendStreamingMessage is A2A SendStreamingMessage: a search answers one
// Message and ends; an ask answers its Task, then follows it until it
// ends.
func (s *Server) SendStreamingMessage(in *a2apb.SendMessageRequest, stream grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	ctx := stream.Context()
	c, err := s.caller(ctx, false)
	if err != nil {
		return err
	}
	req, err := sendRequestFromPB(in)
	if err != nil {
		return err
	}
	st, err := s.deps.Service.SendStreamingMessage(ctx, c, req, "")
	if err != nil {
		return err
	}
	return pump(ctx, stream, st)
}

// SubscribeToTask is A2A SubscribeToTask: the task as it is, then its
// transition, then the end.
func (s *Server) SubscribeToTask(in *a2apb.SubscribeToTaskRequest, stream grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	ctx := stream.Context()
	c, err := s.caller(ctx, true)
	if err != nil {
		return err
	}
	if err := required("id", in.Id); err != nil {
		return err
	}
	st, err := s.deps.Service.SubscribeToTask(ctx, c, in.Id, "")
	if err != nil {
		return err
	}
	return pump(ctx, stream, st)
}

// pump sends the stream's events until it ends or the client goes away.
// Send blocks while the client does not read (gRPC keeps at most 64 KiB
// unsent a stream), and the service's stream stops producing when it is
// not read, so a client that stops reading holds a bounded amount.
func pump(ctx context.Context, out grpc.ServerStreamingServer[a2apb.StreamResponse], st *service.Stream) error {
	defer st.Close()
	for {
		select {
		case ev, ok := <-st.Events():
			if !ok {
				return nil
			}
			msg, err := streamResponseToPB(&ev.Resp)
			if err != nil {
				return err
			}
			if err := out.Send(msg); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
