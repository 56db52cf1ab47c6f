package a2a

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// The A2A 0.3 shapes, served on the JSON-RPC binding to 0.3 clients (slash
// method names, kind discriminators, lowercase states, bare results).

// Message03 is a 0.3 message.
type Message03 struct {
	Kind             string          `json:"kind"`
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId,omitempty"`
	TaskID           string          `json:"taskId,omitempty"`
	Role             string          `json:"role"`
	Parts            []Part03        `json:"parts"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
}

// Part03 is a 0.3 part: kind text, data or file.
type Part03 struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	File     *File03         `json:"file,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// File03 is the file of a 0.3 file part: bytes (base64) or a URI.
type File03 struct {
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// TaskStatus03 is a 0.3 task status.
type TaskStatus03 struct {
	State     string     `json:"state"`
	Message   *Message03 `json:"message,omitempty"`
	Timestamp string     `json:"timestamp,omitempty"`
}

// Artifact03 is a 0.3 artifact.
type Artifact03 struct {
	ArtifactID  string          `json:"artifactId"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []Part03        `json:"parts"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Extensions  []string        `json:"extensions,omitempty"`
}

// Task03 is a 0.3 task.
type Task03 struct {
	Kind      string          `json:"kind"`
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    TaskStatus03    `json:"status"`
	Artifacts []Artifact03    `json:"artifacts,omitempty"`
	History   []Message03     `json:"history,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// StatusUpdate03 is a 0.3 status-update event; Final marks the last event.
type StatusUpdate03 struct {
	Kind      string       `json:"kind"`
	TaskID    string       `json:"taskId"`
	ContextID string       `json:"contextId"`
	Status    TaskStatus03 `json:"status"`
	Final     bool         `json:"final"`
}

// ArtifactUpdate03 is a 0.3 artifact-update event.
type ArtifactUpdate03 struct {
	Kind      string     `json:"kind"`
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Artifact  Artifact03 `json:"artifact"`
	Append    bool       `json:"append"`
	LastChunk bool       `json:"lastChunk"`
}

// MessageSendConfig03 is 0.3's configuration: blocking is the inverse of
// 1.0's returnImmediately and defaults to false.
type MessageSendConfig03 struct {
	AcceptedOutputModes    []string        `json:"acceptedOutputModes,omitempty"`
	Blocking               *bool           `json:"blocking,omitempty"`
	HistoryLength          *int32          `json:"historyLength,omitempty"`
	PushNotificationConfig json.RawMessage `json:"pushNotificationConfig,omitempty"`
}

// MessageSendParams03 is the params of message/send and message/stream.
type MessageSendParams03 struct {
	Message       *Message03           `json:"message"`
	Configuration *MessageSendConfig03 `json:"configuration,omitempty"`
	Metadata      json.RawMessage      `json:"metadata,omitempty"`
}

// State03 spells a task state the 0.3 way.
func State03(s TaskState) string {
	switch s {
	case TaskStateUnspecified:
		return "unknown"
	case TaskStateInputRequired:
		return "input-required"
	case TaskStateAuthRequired:
		return "auth-required"
	}
	return strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_"))
}

// Request converts 0.3 send params to a 1.0 request.
func (p MessageSendParams03) Request() (SendMessageRequest, error) {
	if p.Message == nil {
		return SendMessageRequest{}, BadParam("message", "is required")
	}
	m, err := p.Message.V1()
	if err != nil {
		return SendMessageRequest{}, err
	}
	req := SendMessageRequest{Message: &m, Metadata: p.Metadata}
	returnNow := true // 0.3's blocking defaults to false
	req.Configuration = &SendMessageConfiguration{ReturnImmediately: &returnNow}
	if c := p.Configuration; c != nil {
		if c.Blocking != nil {
			returnNow = !*c.Blocking
		}
		req.Configuration.AcceptedOutputModes = c.AcceptedOutputModes
		req.Configuration.HistoryLength = c.HistoryLength
		push, err := pushConfig03To1(c.PushNotificationConfig)
		if err != nil {
			return SendMessageRequest{}, err
		}
		req.Configuration.TaskPushNotificationConfig = push
	}
	return req, nil
}

// V1 converts a 0.3 message to 1.0.
func (m Message03) V1() (Message, error) {
	out := Message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
	switch m.Role {
	case "user":
		out.Role = RoleUser
	case "agent":
		out.Role = RoleAgent
	case "":
	default:
		out.Role = Role(m.Role) // refused by validation with the value named
	}
	for i, p := range m.Parts {
		v1, err := p.V1()
		if err != nil {
			return Message{}, BadParam(fmt.Sprintf("message.parts[%d]", i), "%v", err)
		}
		out.Parts = append(out.Parts, v1)
	}
	return out, nil
}

// V1 converts a 0.3 part to 1.0. The kind may be left out when the content
// field makes it plain.
func (p Part03) V1() (Part, error) {
	kind := p.Kind
	if kind == "" {
		switch {
		case p.Text != nil:
			kind = "text"
		case p.Data != nil:
			kind = "data"
		case p.File != nil:
			kind = "file"
		}
	}
	out := Part{Metadata: p.Metadata}
	switch kind {
	case "text":
		if p.Text == nil {
			return Part{}, fmt.Errorf("a text part needs text")
		}
		out.Text = p.Text
	case "data":
		if p.Data == nil {
			return Part{}, fmt.Errorf("a data part needs data")
		}
		out.Data, out.MediaType = p.Data, "application/json"
	case "file":
		if p.File == nil {
			return Part{}, fmt.Errorf("a file part needs file")
		}
		out.Filename, out.MediaType = p.File.Name, p.File.MimeType
		switch {
		case p.File.URI != "":
			u := p.File.URI
			out.URL = &u
		default:
			b, err := base64.StdEncoding.DecodeString(p.File.Bytes)
			if err != nil {
				return Part{}, fmt.Errorf("file.bytes is not base64: %v", err)
			}
			out.Raw = b
			if out.Raw == nil {
				out.Raw = []byte{}
			}
		}
	default:
		return Part{}, fmt.Errorf("unknown part kind %q (want text, data or file)", kind)
	}
	return out, nil
}

// ToV03 converts a 1.0 message to 0.3.
func (m Message) ToV03() Message03 {
	out := Message03{Kind: "message", MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs, Parts: parts03(m.Parts)}
	switch m.Role {
	case RoleUser:
		out.Role = "user"
	case RoleAgent:
		out.Role = "agent"
	default:
		out.Role = strings.ToLower(strings.TrimPrefix(string(m.Role), "ROLE_"))
	}
	return out
}

func parts03(ps []Part) []Part03 {
	out := make([]Part03, len(ps))
	for i, p := range ps {
		switch {
		case p.Text != nil:
			out[i] = Part03{Kind: "text", Text: p.Text, Metadata: p.Metadata}
		case p.Data != nil:
			out[i] = Part03{Kind: "data", Data: p.Data, Metadata: p.Metadata}
		case p.URL != nil:
			out[i] = Part03{Kind: "file", File: &File03{Name: p.Filename, MimeType: p.MediaType, URI: *p.URL}, Metadata: p.Metadata}
		default:
			out[i] = Part03{Kind: "file", File: &File03{Name: p.Filename, MimeType: p.MediaType,
				Bytes: base64.StdEncoding.EncodeToString(p.Raw)}, Metadata: p.Metadata}
		}
	}
	return out
}

func status03(s TaskStatus) TaskStatus03 {
	out := TaskStatus03{State: State03(s.State), Timestamp: s.Timestamp}
	if s.Message != nil {
		m := s.Message.ToV03()
		out.Message = &m
	}
	return out
}

func artifact03(a Artifact) Artifact03 {
	return Artifact03{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: parts03(a.Parts),
		Metadata: a.Metadata, Extensions: a.Extensions}
}

// ToV03 converts a 1.0 task to 0.3.
func (t Task) ToV03() Task03 {
	out := Task03{Kind: "task", ID: t.ID, ContextID: t.ContextID, Status: status03(t.Status), Metadata: t.Metadata}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, artifact03(a))
	}
	for _, m := range t.History {
		out.History = append(out.History, m.ToV03())
	}
	return out
}

// ToV03 converts a stream event to its 0.3 object. A status update that
// enters a terminal state is final.
func (ev StreamResponse) ToV03() any {
	switch {
	case ev.Task != nil:
		return ev.Task.ToV03()
	case ev.Message != nil:
		return ev.Message.ToV03()
	case ev.StatusUpdate != nil:
		u := ev.StatusUpdate
		return StatusUpdate03{Kind: "status-update", TaskID: u.TaskID, ContextID: u.ContextID, Status: status03(u.Status),
			Final: u.Status.State.Terminal()}
	case ev.ArtifactUpdate != nil:
		u := ev.ArtifactUpdate
		return ArtifactUpdate03{Kind: "artifact-update", TaskID: u.TaskID, ContextID: u.ContextID,
			Artifact: artifact03(u.Artifact), Append: u.Append, LastChunk: u.LastChunk}
	}
	return nil
}
