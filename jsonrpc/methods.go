package jsonrpc

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/httpjson"
	"github.com/kfa-project/kfa/service"
)

// The method names of A2A v1.0 (PascalCase, as gRPC) and 0.3 (slashes).
const (
	MethodSendMessage          = "SendMessage"
	MethodSendStreamingMessage = "SendStreamingMessage"
	MethodGetTask              = "GetTask"
	MethodListTasks            = "ListTasks"
	MethodCancelTask           = "CancelTask"
	MethodSubscribeToTask      = "SubscribeToTask"
	MethodGetExtendedCard      = "GetExtendedAgentCard"
	MethodCreatePushConfig     = "CreateTaskPushNotificationConfig"
	MethodGetPushConfig        = "GetTaskPushNotificationConfig"
	MethodListPushConfigs      = "ListTaskPushNotificationConfigs"
	MethodDeletePushConfig     = "DeleteTaskPushNotificationConfig"

	Method03Send         = "message/send"
	Method03Stream       = "message/stream"
	Method03Get          = "tasks/get"
	Method03Cancel       = "tasks/cancel"
	Method03Resubscribe  = "tasks/resubscribe"
	Method03ExtendedCard = "agent/getAuthenticatedExtendedCard"
	Method03PushSet      = "tasks/pushNotificationConfig/set"
	Method03PushGet      = "tasks/pushNotificationConfig/get"
	Method03PushList     = "tasks/pushNotificationConfig/list"
	Method03PushDelete   = "tasks/pushNotificationConfig/delete"
)

func (h *Handler) methodTable() map[string]method {
	push := method{call: h.pushNotSupported}
	push03 := method{v03: true, call: h.pushNotSupported}
	return map[string]method{
		MethodSendMessage:          {call: h.sendMessage},
		MethodSendStreamingMessage: {open: h.sendStreamingMessage},
		MethodGetTask:              {call: h.getTask},
		MethodListTasks:            {call: h.listTasks},
		MethodCancelTask:           {call: h.cancelTask},
		MethodSubscribeToTask:      {open: h.subscribe},
		MethodGetExtendedCard:      {call: h.extendedCard},
		MethodCreatePushConfig:     push,
		MethodGetPushConfig:        push,
		MethodListPushConfigs:      push,
		MethodDeletePushConfig:     push,

		Method03Send:         {v03: true, call: h.send03},
		Method03Stream:       {v03: true, open: h.stream03},
		Method03Get:          {v03: true, call: h.get03},
		Method03Cancel:       {v03: true, call: h.cancel03},
		Method03Resubscribe:  {v03: true, open: h.subscribe},
		Method03ExtendedCard: {v03: true, call: h.extendedCard03},
		Method03PushSet:      push03,
		Method03PushGet:      push03,
		Method03PushList:     push03,
		Method03PushDelete:   push03,
	}
}

// decode reads params into v (absent params are an empty object), naming
// the field of a type mismatch with a "params." prefix.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := httpjson.DecodeJSON(params, v); err != nil {
		if e, ok := a2a.AsError(err); ok && len(e.Violations) > 0 {
			return a2a.BadParam("params."+e.Violations[0].Field, "%s", e.Violations[0].Description)
		}
		return err
	}
	return nil
}

func (h *Handler) caller(r *http.Request, required bool) (service.Caller, error) {
	return h.deps.Auth.Caller(r, required)
}

// taskParams are the params of GetTask, CancelTask, SubscribeToTask and
// their 0.3 names.
type taskParams struct {
	ID                 string          `json:"id"`
	HistoryLength      *int            `json:"historyLength"`
	HistoryLengthSnake *int            `json:"history_length"`
	Tenant             string          `json:"tenant"`
	Metadata           json.RawMessage `json:"metadata"`
}

func readTaskParams(params json.RawMessage) (taskParams, error) {
	var p taskParams
	if err := decode(params, &p); err != nil {
		return p, err
	}
	if p.ID == "" {
		return p, a2a.BadParam("params.id", "is required")
	}
	if p.HistoryLength == nil {
		p.HistoryLength = p.HistoryLengthSnake
	}
	return p, nil
}

func (h *Handler) sendMessage(ctx context.Context, r *http.Request, params json.RawMessage) (any, error) {
	c, err := h.caller(r, false)
	if err != nil {
		return nil, err
	}
	var req a2a.SendMessageRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	return h.deps.Service.SendMessage(ctx, c, &req)
}

func (h *Handler) sendStreamingMessage(ctx context.Context, r *http.Request, params json.RawMessage) (*service.Stream, error) {
	c, err := h.caller(r, false)
	if err != nil {
		return nil, err
	}
	var req a2a.SendMessageRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	return h.deps.Service.SendStreamingMessage(ctx, c, &req)
}

func (h *Handler) getTask(ctx context.Context, r *http.Request, params json.RawMessage) (any, error) {
	c, err := h.caller(r, true)
	if err != nil {
		return nil, err
	}
	p, err := readTaskParams(params)
	if err != nil {
		return nil, err
	}
	b, err := h.deps.Service.GetTaskJSON(ctx, c, p.ID, p.HistoryLength, nil)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// listParams are ListTasks' params, in both spellings.
type listParams struct {
	Tenant                    string          `json:"tenant"`
	ContextID                 string          `json:"contextId"`
	ContextIDSnake            string          `json:"context_id"`
	Status                    json.RawMessage `json:"status"`
	PageSize                  *int            `json:"pageSize"`
	PageSizeSnake             *int            `json:"page_size"`
	PageToken                 string          `json:"pageToken"`
	PageTokenSnake            string          `json:"page_token"`
	HistoryLength             *int            `json:"historyLength"`
	HistoryLengthSnake        *int            `json:"history_length"`
	StatusTimestampAfter      string          `json:"statusTimestampAfter"`
	StatusTimestampAfterSnake string          `json:"status_timestamp_after"`
	IncludeArtifacts          *bool           `json:"includeArtifacts"`
	IncludeArtifactsSnake     *bool           `json:"include_artifacts"`
}

func first[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

func (h *Handler) listTasks(ctx context.Context, r *http.Request, params json.RawMessage) (any, error) {
	c, err := h.caller(r, true)
	if err != nil {
		return nil, err
	}
	var p listParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	req := service.ListTasksRequest{
		ContextID:            first(p.ContextID, p.ContextIDSnake),
		PageSize:             first(p.PageSize, p.PageSizeSnake),
		PageToken:            first(p.PageToken, p.PageTokenSnake),
		HistoryLength:        first(p.HistoryLength, p.HistoryLengthSnake),
		StatusTimestampAfter: first(p.StatusTimestampAfter, p.StatusTimestampAfterSnake),
	}
	if len(p.Status) > 0 && string(p.Status) != "null" {
		// ProtoJSON allows an enum as its name or its number.
		var name string
		if err := json.Unmarshal(p.Status, &name); err != nil {
			var n int
			if err := json.Unmarshal(p.Status, &n); err != nil {
				return nil, a2a.BadParam("params.status", "must be a task state name or number")
			}
			name = strconv.Itoa(n)
		}
		req.Status = name
	}
	if ia := first(p.IncludeArtifacts, p.IncludeArtifactsSnake); ia != nil {
		req.IncludeArtifacts = *ia
	}
	b, err := h.deps.Service.ListTasksJSON(ctx, c, req, nil)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

func (h *Handler) cancelTask(ctx context.Context, r *http.Request, params json.RawMessage) (any, error) {
	c, err := h.caller(r, true)
	if err != nil {
		return nil, err
	}
	p, err := readTaskParams(params)
	if err != nil {
		return nil, err
	}
	return h.deps.Service.CancelTask(ctx, c, p.ID)
}

func (h *Handler) subscribe(ctx context.Context, r *http.Request, params json.RawMessage) (*service.Stream, error) {
	c, err := h.caller(r, true)
	if err != nil {
		return nil, err
	}
	p, err := readTaskParams(params)
	if err != nil {
		return nil, err
	}
	return h.deps.Service.SubscribeToTask(ctx, c, p.ID)
}

func (h *Handler) extendedCard(_ context.Context, _ *http.Request, _ json.RawMessage) (any, error) {
	return nil, a2a.Errorf(a2a.UnsupportedOperation,
		"this agent has no extended agent card (capabilities.extendedAgentCard is false); the public card is at /.well-known/agent-card.json")
}

func (h *Handler) pushNotSupported(_ context.Context, r *http.Request, _ json.RawMessage) (any, error) {
	if _, err := h.caller(r, true); err != nil {
		return nil, err
	}
	return nil, a2a.Errorf(a2a.PushNotificationNotSupp,
		"push notifications are not supported by this agent (capabilities.pushNotifications is false); use SubscribeToTask or poll GetTask")
}

// The 0.3 methods read 0.3 shapes, run the same operations, and answer
// bare 0.3 objects with kind discriminators.

func read03Send(params json.RawMessage) (a2a.SendMessageRequest, error) {
	var p a2a.MessageSendParams03
	if err := decode(params, &p); err != nil {
		return a2a.SendMessageRequest{}, err
	}
	return p.Request()
}

func (h *Handler) send03(ctx context.Context, r *http.Request, params json.RawMessage) (any, error) {
	c, err := h.caller(r, false)
	if err != nil {
		return nil, err
	}
	req, err := read03Send(params)
	if err != nil {
		return nil, err
	}
	res, err := h.deps.Service.SendMessage(ctx, c, &req)
	if err != nil {
		return nil, err
	}
	if res.Task != nil {
		return res.Task.ToV03(), nil
	}
	return res.Message.ToV03(), nil
}

func (h *Handler) stream03(ctx context.Context, r *http.Request, params json.RawMessage) (*service.Stream, error) {
	c, err := h.caller(r, false)
	if err != nil {
		return nil, err
	}
	req, err := read03Send(params)
	if err != nil {
		return nil, err
	}
	return h.deps.Service.SendStreamingMessage(ctx, c, &req)
}

func (h *Handler) get03(ctx context.Context, r *http.Request, params json.RawMessage) (any, error) {
	c, err := h.caller(r, true)
	if err != nil {
		return nil, err
	}
	p, err := readTaskParams(params)
	if err != nil {
		return nil, err
	}
	t, err := h.deps.Service.GetTask(ctx, c, p.ID, p.HistoryLength)
	if err != nil {
		return nil, err
	}
	return t.ToV03(), nil
}

func (h *Handler) cancel03(ctx context.Context, r *http.Request, params json.RawMessage) (any, error) {
	t, err := h.cancelTask(ctx, r, params)
	if err != nil {
		return nil, err
	}
	return t.(a2a.Task).ToV03(), nil
}

func (h *Handler) extendedCard03(_ context.Context, _ *http.Request, _ json.RawMessage) (any, error) {
	return nil, a2a.Errorf(a2a.ExtendedCardNotConfigured,
		"this agent has no authenticated extended card; the public card is at /.well-known/agent-card.json")
}
