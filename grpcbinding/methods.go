package grpcbinding

import (
	"context"
	"encoding/json"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/kfa-project/kfa/a2a"
)

// The unary methods of lf.a2a.v1.A2AService. Each authenticates as its
// HTTP+JSON twin does (anonymous where that one is), converts the request,
// calls the same service method, and converts the answer.

// SendMessage is A2A SendMessage: anonymous for search, bearer for ask.
func (s *Server) SendMessage(ctx context.Context, in *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	c, err := s.caller(ctx, false)
	if err != nil {
		return nil, err
	}
	req, err := sendRequestFromPB(in)
	if err != nil {
		return nil, err
	}
	resp, err := s.deps.Service.SendMessage(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return sendResponseToPB(&resp)
}

// GetTask is A2A GetTask: the owner's bearer is required.
func (s *Server) GetTask(ctx context.Context, in *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	c, err := s.caller(ctx, true)
	if err != nil {
		return nil, err
	}
	if err := required("id", in.Id); err != nil {
		return nil, err
	}
	t, err := s.deps.Service.GetTask(ctx, c, in.Id, intPtr(in.HistoryLength))
	if err != nil {
		return nil, err
	}
	return taskToPB(&t)
}

// ListTasks is A2A ListTasks over the caller's tasks.
func (s *Server) ListTasks(ctx context.Context, in *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	c, err := s.caller(ctx, true)
	if err != nil {
		return nil, err
	}
	req, err := listRequestFromPB(in)
	if err != nil {
		return nil, err
	}
	// The listing is answered as the JSON every binding answers, read
	// back: one implementation of a page.
	b, err := s.deps.Service.ListTasksJSON(ctx, c, req, nil)
	if err != nil {
		return nil, err
	}
	var page a2a.ListTasksResponse
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, err
	}
	return listResponseToPB(&page)
}

// CancelTask is A2A CancelTask.
func (s *Server) CancelTask(ctx context.Context, in *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	c, err := s.caller(ctx, true)
	if err != nil {
		return nil, err
	}
	if err := required("id", in.Id); err != nil {
		return nil, err
	}
	if _, err := structJSON(in.Metadata, "metadata"); err != nil {
		return nil, err
	}
	t, err := s.deps.Service.CancelTask(ctx, c, in.Id)
	if err != nil {
		return nil, err
	}
	return taskToPB(&t)
}

// CreateTaskPushNotificationConfig is A2A CreateTaskPushNotificationConfig.
func (s *Server) CreateTaskPushNotificationConfig(ctx context.Context, in *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	c, err := s.caller(ctx, true)
	if err != nil {
		return nil, err
	}
	if err := required("taskId", in.TaskId); err != nil {
		return nil, err
	}
	out, err := s.deps.Service.CreatePushConfig(ctx, c, in.TaskId, pushConfigFromPB(in))
	if err != nil {
		return nil, err
	}
	return pushConfigToPB(&out), nil
}

// GetTaskPushNotificationConfig is A2A GetTaskPushNotificationConfig.
func (s *Server) GetTaskPushNotificationConfig(ctx context.Context, in *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	c, err := s.caller(ctx, true)
	if err != nil {
		return nil, err
	}
	if err := required("taskId", in.TaskId); err != nil {
		return nil, err
	}
	out, err := s.deps.Service.GetPushConfig(ctx, c, in.TaskId, in.Id)
	if err != nil {
		return nil, err
	}
	return pushConfigToPB(&out), nil
}

// ListTaskPushNotificationConfigs is A2A ListTaskPushNotificationConfigs.
// A page size of 0 is proto3's absent one: the listing's default.
func (s *Server) ListTaskPushNotificationConfigs(ctx context.Context, in *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	c, err := s.caller(ctx, true)
	if err != nil {
		return nil, err
	}
	var size *int
	if in.PageSize != 0 {
		n := int(in.PageSize)
		size = &n
	}
	if err := required("taskId", in.TaskId); err != nil {
		return nil, err
	}
	out, err := s.deps.Service.ListPushConfigs(ctx, c, in.TaskId, size, in.PageToken)
	if err != nil {
		return nil, err
	}
	return pushListToPB(&out), nil
}

// DeleteTaskPushNotificationConfig is A2A DeleteTaskPushNotificationConfig:
// idempotent.
func (s *Server) DeleteTaskPushNotificationConfig(ctx context.Context, in *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	c, err := s.caller(ctx, true)
	if err != nil {
		return nil, err
	}
	if err := required("taskId", in.TaskId); err != nil {
		return nil, err
	}
	if err := s.deps.Service.DeletePushConfig(ctx, c, in.TaskId, in.Id); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// GetExtendedAgentCard answers the card plus what the caller may still do,
// anonymous callers included; a bad credential is refused.
func (s *Server) GetExtendedAgentCard(ctx context.Context, _ *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	c, err := s.caller(ctx, false)
	if err != nil {
		return nil, err
	}
	card, err := s.deps.Service.ExtendedCard(ctx, c)
	if err != nil {
		return nil, err
	}
	return cardToPB(&card)
}

var _ a2apb.A2AServiceServer = (*Server)(nil)

// required refuses an empty id, as JSON-RPC does (on HTTP+JSON the id is
// a path segment, never empty).
func required(field, v string) error {
	if v == "" {
		return a2a.BadParam(field, "is required")
	}
	return nil
}
