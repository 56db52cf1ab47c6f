package jsonrpc

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
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

// method is one JSON-RPC method: a service operation with the decoding of
// its params and the encoding of its answer. The 1.0 and 0.3 names of an
// operation run the same operation; they differ only in their codecs.
// Exactly one of call and open is set.
type method struct {
	v03  bool
	call func(ctx context.Context, c service.Caller, params json.RawMessage) (any, error)
	// open's lastEventID is the request's Last-Event-ID: a reconnecting
	// client resumes after the last event it got.
	open func(ctx context.Context, c service.Caller, params json.RawMessage, lastEventID string) (*service.Stream, error)
	auth authMode
	// mapErr, when set, turns the operation's error into this version's.
	mapErr func(error) error
}

// authMode is what a method asks of the caller's credential.
type authMode int

const (
	ignored  authMode = iota // never looked at
	optional                 // anonymous, or a valid credential
	required                 // a valid credential
)

// unary is a method answering once: decode, run op, encode.
func unary[P, R any](auth authMode, decode func(json.RawMessage) (P, error), op func(context.Context, service.Caller, P) (R, error), encode func(R) (any, error)) method {
	return method{auth: auth, call: func(ctx context.Context, c service.Caller, params json.RawMessage) (any, error) {
		p, err := decode(params)
		if err != nil {
			return nil, err
		}
		res, err := op(ctx, c, p)
		if err != nil {
			return nil, err
		}
		return encode(res)
	}}
}

// streaming is a method answering with a stream; its events are encoded
// for the method's version by the handler.
func streaming[P any](auth authMode, decode func(json.RawMessage) (P, error), op func(context.Context, service.Caller, P, string) (*service.Stream, error)) method {
	return method{auth: auth, open: func(ctx context.Context, c service.Caller, params json.RawMessage, lastEventID string) (*service.Stream, error) {
		p, err := decode(params)
		if err != nil {
			return nil, err
		}
		return op(ctx, c, p, lastEventID)
	}}
}

// v03 marks m as a 0.3 method.
func v03(m method) method { m.v03 = true; return m }

func (h *Handler) methodTable() map[string]method {
	svc := h.deps.Service
	const anonymous, owner = optional, required
	card := unary(anonymous, none, h.extendedCard, same[a2a.AgentCard])
	card03 := unary(anonymous, none, h.extendedCard03, same[a2a.AgentCard03])
	return map[string]method{
		MethodSendMessage:          unary(anonymous, decodeSend, svc.SendMessage, same[a2a.SendMessageResponse]),
		MethodSendStreamingMessage: streaming(anonymous, decodeSend, svc.SendStreamingMessage),
		MethodGetTask:              unary(owner, readTaskParams, h.getTask, same[json.RawMessage]),
		MethodListTasks:            unary(owner, decodeList, h.listTasks, same[json.RawMessage]),
		MethodCancelTask:           unary(owner, readTaskParams, h.cancelTask, same[a2a.Task]),
		MethodSubscribeToTask:      streaming(owner, readTaskParams, h.subscribe),
		MethodGetExtendedCard:      card,
		MethodCreatePushConfig:     unary(owner, decodePushCreate, h.createPush, same[a2a.TaskPushNotificationConfig]),
		MethodGetPushConfig:        unary(owner, decodePushRef, h.getPush, same[a2a.TaskPushNotificationConfig]),
		MethodListPushConfigs:      unary(owner, decodePushRef, h.listPush, same[a2a.ListTaskPushNotificationConfigsResponse]),
		MethodDeletePushConfig:     unary(owner, decodePushRef, h.deletePush, same[struct{}]),

		Method03Send:         v03(unary(anonymous, decodeSend03, svc.SendMessage, sendResult03)),
		Method03Stream:       v03(streaming(anonymous, decodeSend03, svc.SendStreamingMessage)),
		Method03Get:          v03(unary(owner, readTaskParams, h.getTask, taskJSON03)),
		Method03Cancel:       v03(unary(owner, readTaskParams, h.cancelTask, task03)),
		Method03Resubscribe:  v03(streaming(owner, readTaskParams, h.subscribe)),
		Method03ExtendedCard: v03(card03),
		Method03PushSet:      v03(unary(owner, decodePushSet03, h.createPush, pushConfig03)),
		Method03PushGet:      v03(unary(owner, decodePushRef03, h.getPush, pushConfig03)),
		Method03PushList:     v03(unary(owner, decodePushRef03, h.listPush, pushList03)),
		Method03PushDelete:   v03(unary(owner, decodePushRef03, h.deletePush, null)),
	}
}

// The operations. Each takes decoded params, whatever version they came in.

func (h *Handler) getTask(ctx context.Context, c service.Caller, p taskParams) (json.RawMessage, error) {
	return h.deps.Service.GetTaskJSON(ctx, c, p.ID, p.HistoryLength, nil)
}

func (h *Handler) listTasks(ctx context.Context, c service.Caller, req service.ListTasksRequest) (json.RawMessage, error) {
	return h.deps.Service.ListTasksJSON(ctx, c, req, nil)
}

func (h *Handler) cancelTask(ctx context.Context, c service.Caller, p taskParams) (a2a.Task, error) {
	return h.deps.Service.CancelTask(ctx, c, p.ID)
}

func (h *Handler) subscribe(ctx context.Context, c service.Caller, p taskParams, lastEventID string) (*service.Stream, error) {
	return h.deps.Service.SubscribeToTask(ctx, c, p.ID, lastEventID)
}

func (h *Handler) extendedCard(ctx context.Context, c service.Caller, _ struct{}) (a2a.AgentCard, error) {
	return h.deps.Service.ExtendedCard(ctx, c)
}

func (h *Handler) extendedCard03(ctx context.Context, c service.Caller, _ struct{}) (a2a.AgentCard03, error) {
	return h.deps.Service.ExtendedCard03(ctx, c)
}

// Decoders.

// decode reads params into v (absent params are an empty object), naming
// the field of a type mismatch with a "params." prefix.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := httpkit.DecodeJSON(params, v); err != nil {
		if e, ok := a2a.AsError(err); ok && len(e.Violations) > 0 {
			return a2a.BadParam("params."+e.Violations[0].Field, "%s", e.Violations[0].Description)
		}
		return err
	}
	return nil
}

// none ignores params, as the methods without any do.
func none(json.RawMessage) (struct{}, error) { return struct{}{}, nil }

func decodeSend(params json.RawMessage) (*a2a.SendMessageRequest, error) {
	var req a2a.SendMessageRequest
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

func decodeSend03(params json.RawMessage) (*a2a.SendMessageRequest, error) {
	var p a2a.MessageSendParams03
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	req, err := p.Request()
	if err != nil {
		return nil, err
	}
	return &req, nil
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

func decodeList(params json.RawMessage) (service.ListTasksRequest, error) {
	var p listParams
	if err := decode(params, &p); err != nil {
		return service.ListTasksRequest{}, err
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
				return service.ListTasksRequest{}, a2a.BadParam("params.status", "must be a task state name or number")
			}
			name = strconv.Itoa(n)
		}
		req.Status = name
	}
	if ia := first(p.IncludeArtifacts, p.IncludeArtifactsSnake); ia != nil {
		req.IncludeArtifacts = *ia
	}
	return req, nil
}

// Encoders. 1.0 answers the operation's result as it is; 0.3 answers bare
// 0.3 objects with kind discriminators.

func same[R any](r R) (any, error) { return r, nil }

func sendResult03(res a2a.SendMessageResponse) (any, error) {
	if res.Task != nil {
		return res.Task.ToV03(), nil
	}
	return res.Message.ToV03(), nil
}

func task03(t a2a.Task) (any, error) { return t.ToV03(), nil }

// taskJSON03 re-reads the task JSON GetTask answers (0.3 is the rare path;
// 1.0 answers the stored bytes as they are).
func taskJSON03(b json.RawMessage) (any, error) {
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return t.ToV03(), nil
}

// caller authenticates the request as m requires.
func (h *Handler) caller(r *http.Request, m method) (service.Caller, error) {
	if m.auth == ignored {
		return service.Caller{Addr: httpkit.ClientAddr(r)}, nil
	}
	tok, sent, err := httpkit.Credential(r)
	c, err := h.deps.Service.Authenticate(r.Context(),
		service.Credential{Token: tok, Sent: sent, Err: err, Addr: httpkit.ClientAddr(r)}, m.auth == required)
	if c.Agent != nil {
		httpkit.NoteAgent(r.Context(), c.Agent.ID)
	}
	return c, err
}
