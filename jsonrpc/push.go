package jsonrpc

import (
	"context"
	"encoding/json"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/service"
)

// The push notification config methods: 1.0 takes the flat config and
// {taskId, id}; 0.3 nests the config under pushNotificationConfig, names
// the task "id" and the config "pushNotificationConfigId", and answers
// bare arrays and null.

// pushRef names a task's config (or, to list, just the task).
type pushRef struct {
	TaskID    string
	ID        string
	PageSize  *int
	PageToken string
	v03       bool
}

// pushParams are the params of get, list and delete, in every spelling.
type pushParams struct {
	TaskID         string `json:"taskId"`
	TaskIDSnake    string `json:"task_id"`
	ID             string `json:"id"`
	ConfigID03     string `json:"pushNotificationConfigId"`
	PageSize       *int   `json:"pageSize"`
	PageSizeSnake  *int   `json:"page_size"`
	PageToken      string `json:"pageToken"`
	PageTokenSnake string `json:"page_token"`
	Tenant         string `json:"tenant"`
}

func decodePushRef(params json.RawMessage) (pushRef, error) {
	var p pushParams
	if err := decode(params, &p); err != nil {
		return pushRef{}, err
	}
	ref := pushRef{TaskID: first(p.TaskID, p.TaskIDSnake), ID: p.ID, PageSize: first(p.PageSize, p.PageSizeSnake),
		PageToken: first(p.PageToken, p.PageTokenSnake)}
	if ref.TaskID == "" {
		return ref, a2a.BadParam("params.taskId", "is required")
	}
	return ref, nil
}

func decodePushRef03(params json.RawMessage) (pushRef, error) {
	var p pushParams
	if err := decode(params, &p); err != nil {
		return pushRef{}, err
	}
	if p.ID == "" {
		return pushRef{}, a2a.BadParam("params.id", "is required (the task id)")
	}
	return pushRef{TaskID: p.ID, ID: p.ConfigID03, v03: true}, nil
}

func decodePushCreate(params json.RawMessage) (a2a.TaskPushNotificationConfig, error) {
	var c a2a.TaskPushNotificationConfig
	if err := decode(params, &c); err != nil {
		return c, err
	}
	if c.TaskID == "" {
		return c, a2a.BadParam("params.taskId", "is required")
	}
	return c, nil
}

func decodePushSet03(params json.RawMessage) (a2a.TaskPushNotificationConfig, error) {
	var c a2a.TaskPushNotificationConfig03
	if err := decode(params, &c); err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	if c.TaskID == "" {
		return a2a.TaskPushNotificationConfig{}, a2a.BadParam("params.taskId", "is required")
	}
	return c.PushNotificationConfig.V1(c.TaskID), nil
}

func (h *Handler) createPush(ctx context.Context, c service.Caller, in a2a.TaskPushNotificationConfig) (a2a.TaskPushNotificationConfig, error) {
	return h.deps.Service.CreatePushConfig(ctx, c, in.TaskID, in)
}

// getPush answers get. A 0.3 get without a config id names the task's
// only config.
func (h *Handler) getPush(ctx context.Context, c service.Caller, ref pushRef) (a2a.TaskPushNotificationConfig, error) {
	if ref.v03 && ref.ID == "" {
		list, err := h.deps.Service.ListPushConfigs(ctx, c, ref.TaskID, nil, "")
		if err != nil {
			return a2a.TaskPushNotificationConfig{}, err
		}
		if len(list.Configs) != 1 {
			return a2a.TaskPushNotificationConfig{}, a2a.BadParam("params.pushNotificationConfigId",
				"is required unless the task has exactly one config (it has %d)", len(list.Configs))
		}
		return list.Configs[0], nil
	}
	return h.deps.Service.GetPushConfig(ctx, c, ref.TaskID, ref.ID)
}

func (h *Handler) listPush(ctx context.Context, c service.Caller, ref pushRef) (a2a.ListTaskPushNotificationConfigsResponse, error) {
	return h.deps.Service.ListPushConfigs(ctx, c, ref.TaskID, ref.PageSize, ref.PageToken)
}

func (h *Handler) deletePush(ctx context.Context, c service.Caller, ref pushRef) (struct{}, error) {
	return struct{}{}, h.deps.Service.DeletePushConfig(ctx, c, ref.TaskID, ref.ID)
}

func pushConfig03(c a2a.TaskPushNotificationConfig) (any, error) { return c.ToV03(), nil }

func pushList03(l a2a.ListTaskPushNotificationConfigsResponse) (any, error) {
	out := make([]a2a.TaskPushNotificationConfig03, len(l.Configs))
	for i, c := range l.Configs {
		out[i] = c.ToV03()
	}
	return out, nil
}

// null is 0.3's answer to delete.
func null(struct{}) (any, error) { return nil, nil }
