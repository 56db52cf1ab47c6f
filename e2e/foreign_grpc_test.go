package e2e

import (
	"context"
	"strings"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpcstatus "google.golang.org/grpc/status"
)

// grpcTaskIDRoutes are taskIDRoutes's calls over the gRPC binding (the
// server must run it: withGRPC): each answers the call's status code and
// its message and ErrorInfo reason.
func grpcTaskIDRoutes(h *harness, token string) map[string]func(id string) (int, string) {
	c := h.grpcClient()
	call := func(f func(ctx context.Context, id string) error) func(id string) (int, string) {
		return func(id string) (int, string) {
			ctx, cancel := grpcCtx(token)
			defer cancel()
			st := grpcstatus.Convert(f(ctx, id))
			var reason []string
			for _, d := range st.Details() {
				if info, ok := d.(*errdetails.ErrorInfo); ok {
					reason = append(reason, info.Reason)
				}
			}
			return int(st.Code()), st.Message() + " " + strings.Join(reason, " ")
		}
	}
	send := func(id string) *a2apb.SendMessageRequest {
		return &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "b1", TaskId: id, Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "more details"}}}}}
	}
	return map[string]func(id string) (int, string){
		"gRPC GetTask": call(func(ctx context.Context, id string) error {
			_, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Id: id})
			return err
		}),
		"gRPC CancelTask": call(func(ctx context.Context, id string) error {
			_, err := c.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: id})
			return err
		}),
		"gRPC SubscribeToTask": call(func(ctx context.Context, id string) error {
			s, err := c.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: id})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}),
		"gRPC SendMessage with taskId": call(func(ctx context.Context, id string) error {
			_, err := c.SendMessage(ctx, send(id))
			return err
		}),
		"gRPC SendStreamingMessage with taskId": call(func(ctx context.Context, id string) error {
			s, err := c.SendStreamingMessage(ctx, send(id))
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}),
		"gRPC CreateTaskPushNotificationConfig": call(func(ctx context.Context, id string) error {
			_, err := c.CreateTaskPushNotificationConfig(ctx, &a2apb.TaskPushNotificationConfig{TaskId: id, Url: "https://hooks.example.com/kfa"})
			return err
		}),
		"gRPC GetTaskPushNotificationConfig": call(func(ctx context.Context, id string) error {
			_, err := c.GetTaskPushNotificationConfig(ctx, &a2apb.GetTaskPushNotificationConfigRequest{TaskId: id, Id: "c1"})
			return err
		}),
		"gRPC ListTaskPushNotificationConfigs": call(func(ctx context.Context, id string) error {
			_, err := c.ListTaskPushNotificationConfigs(ctx, &a2apb.ListTaskPushNotificationConfigsRequest{TaskId: id})
			return err
		}),
		"gRPC DeleteTaskPushNotificationConfig": call(func(ctx context.Context, id string) error {
			_, err := c.DeleteTaskPushNotificationConfig(ctx, &a2apb.DeleteTaskPushNotificationConfigRequest{TaskId: id, Id: "c1"})
			return err
		}),
	}
}
