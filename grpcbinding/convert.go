package grpcbinding

import (
	"encoding/json"
	"fmt"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/service"
)

// The one converter between kfa's A2A wire types (package a2a, the shapes
// every binding answers in) and the official generated protobuf types of
// lf.a2a.v1. Answers go a2a -> pb; requests pb -> a2a, after which the
// service reads them exactly as it reads the other bindings' requests.
// A field the proto has and kfa does not is never set; a value the
// service would refuse is passed through for it to refuse (so the refusal
// is the same on every binding), except what only protobuf can carry
// wrong (a Struct nested too deep, a Value of no kind), refused here as
// the field it came in.

// Requests: pb -> a2a.

func sendRequestFromPB(in *a2apb.SendMessageRequest) (*a2a.SendMessageRequest, error) {
	out := &a2a.SendMessageRequest{Tenant: in.GetTenant()}
	var err error
	if in.Message != nil {
		if out.Message, err = messageFromPB(in.Message, "message"); err != nil {
			return nil, err
		}
	}
	if out.Metadata, err = structJSON(in.Metadata, "metadata"); err != nil {
		return nil, err
	}
	if c := in.Configuration; c != nil {
		cfg := &a2a.SendMessageConfiguration{AcceptedOutputModes: c.AcceptedOutputModes, HistoryLength: c.HistoryLength}
		if c.ReturnImmediately {
			yes := true
			cfg.ReturnImmediately = &yes
		}
		if p := c.TaskPushNotificationConfig; p != nil {
			if cfg.TaskPushNotificationConfig, err = json.Marshal(pushConfigFromPB(p)); err != nil {
				return nil, err
			}
		}
		out.Configuration = cfg
	}
	return out, nil
}

func messageFromPB(in *a2apb.Message, field string) (*a2a.Message, error) {
	out := &a2a.Message{
		MessageID:        in.MessageId,
		ContextID:        in.ContextId,
		TaskID:           in.TaskId,
		Role:             roleFromPB(in.Role),
		Extensions:       in.Extensions,
		ReferenceTaskIDs: in.ReferenceTaskIds,
	}
	var err error
	if out.Metadata, err = structJSON(in.Metadata, field+".metadata"); err != nil {
		return nil, err
	}
	if len(in.Parts) > 0 {
		out.Parts = make([]a2a.Part, len(in.Parts))
	}
	for i, p := range in.Parts {
		if out.Parts[i], err = partFromPB(p, fmt.Sprintf("%s.parts[%d]", field, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// roleFromPB spells a role as ProtoJSON does; unspecified is absent, as
// proto3 cannot tell the two apart.
func roleFromPB(r a2apb.Role) a2a.Role {
	if r == a2apb.Role_ROLE_UNSPECIFIED {
		return ""
	}
	return a2a.Role(r.String()) // an unknown number comes out as the number
}

func partFromPB(in *a2apb.Part, field string) (a2a.Part, error) {
	out := a2a.Part{MediaType: in.MediaType, Filename: in.Filename}
	var err error
	if out.Metadata, err = structJSON(in.Metadata, field+".metadata"); err != nil {
		return out, err
	}
	switch c := in.Content.(type) {
	case *a2apb.Part_Text:
		out.Text = &c.Text
	case *a2apb.Part_Raw:
		out.Raw = append([]byte{}, c.Raw...) // present, even when empty
	case *a2apb.Part_Url:
		out.URL = &c.Url
	case *a2apb.Part_Data:
		if out.Data, err = valueJSON(c.Data, field+".data"); err != nil {
			return out, err
		}
	}
	return out, nil
}

func pushConfigFromPB(in *a2apb.TaskPushNotificationConfig) a2a.TaskPushNotificationConfig {
	out := a2a.TaskPushNotificationConfig{Tenant: in.Tenant, ID: in.Id, TaskID: in.TaskId, URL: in.Url, Token: in.Token}
	if a := in.Authentication; a != nil {
		out.Authentication = &a2a.PushAuthentication{Scheme: a.Scheme, Credentials: a.Credentials}
	}
	return out
}

func listRequestFromPB(in *a2apb.ListTasksRequest) (service.ListTasksRequest, error) {
	out := service.ListTasksRequest{ContextID: in.ContextId, PageToken: in.PageToken, IncludeArtifacts: in.GetIncludeArtifacts()}
	if in.Status != a2apb.TaskState_TASK_STATE_UNSPECIFIED {
		out.Status = in.Status.String() // a number no state has comes out as the number, refused by the service
	}
	out.PageSize = intPtr(in.PageSize)
	out.HistoryLength = intPtr(in.HistoryLength)
	if ts := in.StatusTimestampAfter; ts != nil {
		if err := ts.CheckValid(); err != nil {
			return out, a2a.BadParam("statusTimestampAfter", "is not a valid timestamp: %v", err)
		}
		out.StatusTimestampAfter = ts.AsTime().Format(time.RFC3339Nano)
	}
	return out, nil
}

func intPtr(n *int32) *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

// structJSON is a Struct as the JSON object the other bindings would have
// read: nil when absent, refused when nested deeper than they allow.
func structJSON(s *structpb.Struct, field string) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	return protoJSON(s, field)
}

func valueJSON(v *structpb.Value, field string) (json.RawMessage, error) {
	if v == nil {
		return nil, a2a.BadParam(field, "is set but holds no value")
	}
	return protoJSON(v, field)
}

func protoJSON(m proto.Message, field string) (json.RawMessage, error) {
	b, err := protojson.Marshal(m)
	if err != nil { // a Value of no kind, a NaN or an infinite number
		return nil, a2a.BadParam(field, "is not a JSON value: %v", err)
	}
	if err := a2a.CheckJSON(b); err != nil {
		return nil, a2a.BadParam(field, "%v", err)
	}
	return b, nil
}

// Answers: a2a -> pb.

func taskToPB(t *a2a.Task) (*a2apb.Task, error) {
	st, err := statusToPB(t.Status)
	if err != nil {
		return nil, err
	}
	out := &a2apb.Task{Id: t.ID, ContextId: t.ContextID, Status: st}
	if out.Metadata, err = structOf(t.Metadata); err != nil {
		return nil, err
	}
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]*a2apb.Artifact, len(t.Artifacts))
	}
	for i := range t.Artifacts {
		if out.Artifacts[i], err = artifactToPB(&t.Artifacts[i]); err != nil {
			return nil, err
		}
	}
	if len(t.History) > 0 {
		out.History = make([]*a2apb.Message, len(t.History))
	}
	for i := range t.History {
		if out.History[i], err = messageToPB(&t.History[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func statusToPB(s a2a.TaskStatus) (*a2apb.TaskStatus, error) {
	out := &a2apb.TaskStatus{State: a2apb.TaskState(a2apb.TaskState_value[string(s.State)])}
	if s.Timestamp != "" {
		t, err := a2a.ParseTime(s.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("grpcbinding: task status timestamp %q: %w", s.Timestamp, err)
		}
		out.Timestamp = timestamppb.New(t)
	}
	if s.Message != nil {
		m, err := messageToPB(s.Message)
		if err != nil {
			return nil, err
		}
		out.Message = m
	}
	return out, nil
}

func messageToPB(m *a2a.Message) (*a2apb.Message, error) {
	out := &a2apb.Message{
		MessageId:        m.MessageID,
		ContextId:        m.ContextID,
		TaskId:           m.TaskID,
		Role:             a2apb.Role(a2apb.Role_value[string(m.Role)]),
		Extensions:       m.Extensions,
		ReferenceTaskIds: m.ReferenceTaskIDs,
	}
	var err error
	if out.Metadata, err = structOf(m.Metadata); err != nil {
		return nil, err
	}
	if out.Parts, err = partsToPB(m.Parts); err != nil {
		return nil, err
	}
	return out, nil
}

func partsToPB(ps []a2a.Part) ([]*a2apb.Part, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]*a2apb.Part, len(ps))
	for i, p := range ps {
		q := &a2apb.Part{MediaType: p.MediaType, Filename: p.Filename}
		var err error
		if q.Metadata, err = structOf(p.Metadata); err != nil {
			return nil, err
		}
		switch {
		case p.Text != nil:
			q.Content = &a2apb.Part_Text{Text: *p.Text}
		case p.Raw != nil:
			q.Content = &a2apb.Part_Raw{Raw: p.Raw}
		case p.URL != nil:
			q.Content = &a2apb.Part_Url{Url: *p.URL}
		case p.Data != nil:
			v, err := valueOf(p.Data)
			if err != nil {
				return nil, fmt.Errorf("grpcbinding: data part: %w", err)
			}
			q.Content = &a2apb.Part_Data{Data: v}
		}
		out[i] = q
	}
	return out, nil
}

func artifactToPB(a *a2a.Artifact) (*a2apb.Artifact, error) {
	out := &a2apb.Artifact{ArtifactId: a.ArtifactID, Name: a.Name, Description: a.Description, Extensions: a.Extensions}
	var err error
	if out.Metadata, err = structOf(a.Metadata); err != nil {
		return nil, err
	}
	if out.Parts, err = partsToPB(a.Parts); err != nil {
		return nil, err
	}
	return out, nil
}

func sendResponseToPB(r *a2a.SendMessageResponse) (*a2apb.SendMessageResponse, error) {
	switch {
	case r.Task != nil:
		t, err := taskToPB(r.Task)
		if err != nil {
			return nil, err
		}
		return &a2apb.SendMessageResponse{Payload: &a2apb.SendMessageResponse_Task{Task: t}}, nil
	case r.Message != nil:
		m, err := messageToPB(r.Message)
		if err != nil {
			return nil, err
		}
		return &a2apb.SendMessageResponse{Payload: &a2apb.SendMessageResponse_Message{Message: m}}, nil
	}
	return nil, fmt.Errorf("grpcbinding: an answer with neither a task nor a message")
}

func streamResponseToPB(r *a2a.StreamResponse) (*a2apb.StreamResponse, error) {
	switch {
	case r.Task != nil:
		t, err := taskToPB(r.Task)
		if err != nil {
			return nil, err
		}
		return &a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Task{Task: t}}, nil
	case r.Message != nil:
		m, err := messageToPB(r.Message)
		if err != nil {
			return nil, err
		}
		return &a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Message{Message: m}}, nil
	case r.StatusUpdate != nil:
		u := r.StatusUpdate
		st, err := statusToPB(u.Status)
		if err != nil {
			return nil, err
		}
		meta, err := structOf(u.Metadata)
		if err != nil {
			return nil, err
		}
		return &a2apb.StreamResponse{Payload: &a2apb.StreamResponse_StatusUpdate{StatusUpdate: &a2apb.TaskStatusUpdateEvent{
			TaskId: u.TaskID, ContextId: u.ContextID, Status: st, Metadata: meta,
		}}}, nil
	case r.ArtifactUpdate != nil:
		u := r.ArtifactUpdate
		a, err := artifactToPB(&u.Artifact)
		if err != nil {
			return nil, err
		}
		meta, err := structOf(u.Metadata)
		if err != nil {
			return nil, err
		}
		return &a2apb.StreamResponse{Payload: &a2apb.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2apb.TaskArtifactUpdateEvent{
			TaskId: u.TaskID, ContextId: u.ContextID, Artifact: a, Append: u.Append, LastChunk: u.LastChunk, Metadata: meta,
		}}}, nil
	}
	return nil, fmt.Errorf("grpcbinding: an empty stream event")
}

func listResponseToPB(r *a2a.ListTasksResponse) (*a2apb.ListTasksResponse, error) {
	out := &a2apb.ListTasksResponse{NextPageToken: r.NextPageToken, PageSize: int32(r.PageSize), TotalSize: int32(r.TotalSize)}
	if len(r.Tasks) > 0 {
		out.Tasks = make([]*a2apb.Task, len(r.Tasks))
	}
	for i := range r.Tasks {
		t, err := taskToPB(&r.Tasks[i])
		if err != nil {
			return nil, err
		}
		out.Tasks[i] = t
	}
	return out, nil
}

func pushConfigToPB(c *a2a.TaskPushNotificationConfig) *a2apb.TaskPushNotificationConfig {
	out := &a2apb.TaskPushNotificationConfig{Tenant: c.Tenant, Id: c.ID, TaskId: c.TaskID, Url: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &a2apb.AuthenticationInfo{Scheme: a.Scheme, Credentials: a.Credentials}
	}
	return out
}

func pushListToPB(r *a2a.ListTaskPushNotificationConfigsResponse) *a2apb.ListTaskPushNotificationConfigsResponse {
	out := &a2apb.ListTaskPushNotificationConfigsResponse{NextPageToken: r.NextPageToken}
	for i := range r.Configs {
		out.Configs = append(out.Configs, pushConfigToPB(&r.Configs[i]))
	}
	return out
}

// structOf is a JSON object kfa made (metadata) as a Struct; nil when
// absent. (encoding/json and structpb.NewStruct do it in a fraction of
// protojson's time, and every task answered carries some.)
func structOf(raw json.RawMessage) (*structpb.Struct, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("grpcbinding: metadata: %w", err)
	}
	return structpb.NewStruct(m)
}

// valueOf is any JSON value kfa made (a data part) as a Value.
func valueOf(raw json.RawMessage) (*structpb.Value, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return structpb.NewValue(v)
}

// structOfAny is a Go value that encodes as a JSON object (a card's
// extension params, a signature's header) as a Struct.
func structOfAny(v any) (*structpb.Struct, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return structOf(b)
}
