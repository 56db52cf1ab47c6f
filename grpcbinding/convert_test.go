package grpcbinding

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/kfa-project/kfa/a2a"
)

func sampleTask() a2a.Task {
	text := "How do I rotate bbolt's file?"
	url := "https://example.com/x"
	return a2a.Task{
		ID: "01JD7Q3X9S2M4V6B8N0P2R4T6W", ContextID: "01JD7Q3X9S2M4V6B8N0P2R4T6X",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: "2026-12-02T10:30:00.123Z", Message: &a2a.Message{
			MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{{Text: &text}}, TaskID: "t", ContextID: "c"}},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Name: "reply", Description: "the answer", Extensions: []string{"urn:x"},
			Parts: []a2a.Part{{Text: &text, MediaType: "text/plain", Metadata: json.RawMessage(`{"k":[1,"two",null,true,{"n":1.5}]}`)},
				{URL: &url, Filename: "x.txt"}, {Raw: []byte{1, 2, 3}}},
			Metadata: json.RawMessage(`{"replyId":"r1"}`)}},
		History: []a2a.Message{{MessageID: "m1", Role: a2a.RoleUser, ReferenceTaskIDs: []string{"t0"},
			Parts:    []a2a.Part{a2a.DataPart(json.RawMessage(`{"action":"ask","question":"q","nested":{"deep":[{"a":[]}]}}`))},
			Metadata: json.RawMessage(`{"skill":"ask-network"}`)}},
		Metadata: json.RawMessage(`{"discussionId":"01JD0000000000000000000000"}`),
	}
}

func sampleCard() a2a.AgentCard {
	return a2a.AgentCard{
		Name: "kfa", Description: "d", Version: "v1", DocumentationURL: "https://d", IconURL: "https://i",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "https://k/a2a/v1", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
			{URL: "k:9090", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0", Tenant: "t"}},
		Provider:     &a2a.AgentProvider{Organization: "kfa", URL: "https://k"},
		Capabilities: a2a.AgentCapabilities{Streaming: true, ExtendedAgentCard: true, Extensions: []a2a.AgentExtension{{URI: "urn:e", Description: "e", Required: true, Params: map[string]any{"tools": []string{"a", "b"}, "n": 1}}}},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "kfa_", Description: "b"}},
			"apiKey": {APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: "X-API-Key"}},
			"code": {OAuth2: &a2a.OAuth2SecurityScheme{OAuth2MetadataURL: "https://o/.well-known", Flows: a2a.OAuthFlows{
				AuthorizationCode: &a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: "https://o/a", TokenURL: "https://o/t", Scopes: map[string]string{"post": "ask"}, PKCERequired: true}}}},
			"cc": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{
				ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: "https://o/t", Scopes: map[string]string{"read": "r"}}}}},
		},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"cc": {List: []string{"read"}}}}},
		DefaultInputModes:    []string{"application/json"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "d", Tags: []string{"t"}, Examples: []string{"e"},
			SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {}}}}}},
		Signatures: []a2a.AgentCardSignature{{Protected: "p", Signature: "s", Header: map[string]any{"kid": "k1"}}},
	}
}

// TestAnswersConvertAsTheirJSON: every answer kfa converts reads, as
// ProtoJSON of the generated type, as what the HTTP+JSON binding writes
// of the same value, so the two bindings answer the same thing.
func TestAnswersConvertAsTheirJSON(t *testing.T) {
	task := sampleTask()
	card := sampleCard()
	msg := task.History[0]
	for _, tc := range []struct {
		name string
		kfa  any
		pb   func() (proto.Message, error)
	}{
		{"task", task, func() (proto.Message, error) { return taskToPB(&task) }},
		{"send answer, task", a2a.SendMessageResponse{Task: &task}, func() (proto.Message, error) {
			return sendResponseToPB(&a2a.SendMessageResponse{Task: &task})
		}},
		{"send answer, message", a2a.SendMessageResponse{Message: &msg}, func() (proto.Message, error) {
			return sendResponseToPB(&a2a.SendMessageResponse{Message: &msg})
		}},
		{"status update", a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: task.Status}},
			func() (proto.Message, error) {
				return streamResponseToPB(&a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: task.Status}})
			}},
		{"artifact update", a2a.StreamResponse{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: task.Artifacts[0], LastChunk: true}},
			func() (proto.Message, error) {
				return streamResponseToPB(&a2a.StreamResponse{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: task.Artifacts[0], LastChunk: true}})
			}},
		{"list", a2a.ListTasksResponse{Tasks: []a2a.Task{task, task}, NextPageToken: "n", PageSize: 2, TotalSize: 9},
			func() (proto.Message, error) {
				return listResponseToPB(&a2a.ListTasksResponse{Tasks: []a2a.Task{task, task}, NextPageToken: "n", PageSize: 2, TotalSize: 9})
			}},
		{"push config", a2a.TaskPushNotificationConfig{ID: "c", TaskID: "t", URL: "https://h", Token: "tok", Authentication: &a2a.PushAuthentication{Scheme: "Bearer", Credentials: "x"}},
			func() (proto.Message, error) {
				return pushConfigToPB(&a2a.TaskPushNotificationConfig{ID: "c", TaskID: "t", URL: "https://h", Token: "tok", Authentication: &a2a.PushAuthentication{Scheme: "Bearer", Credentials: "x"}}), nil
			}},
		{"card", card, func() (proto.Message, error) { return cardToPB(&card) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.pb()
			if err != nil {
				t.Fatal(err)
			}
			pj, err := protojson.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			kj, err := json.Marshal(tc.kfa)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := normalized(t, pj), normalized(t, kj); !reflect.DeepEqual(got, want) {
				t.Fatalf("ProtoJSON of the converted answer:\n%s\nkfa's JSON:\n%s", pj, kj)
			}
		})
	}
}

// normalized is a JSON value with what ProtoJSON leaves out (false, "",
// 0 and empty lists and objects, which kfa writes in a few places) left
// out, and timestamps in one precision.
func normalized(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var norm func(any) any
	norm = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if n := norm(e); n != nil {
					out[k] = n
				}
			}
			if len(out) == 0 {
				return nil
			}
			return out
		case []any:
			if len(x) == 0 {
				return nil
			}
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = norm(e)
			}
			return out
		case string:
			if ts, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return ts.UTC().Format(time.RFC3339Nano)
			}
			if x == "" {
				return nil
			}
		case bool:
			if !x {
				return nil
			}
		case float64:
			if x == 0 {
				return nil
			}
		}
		return v
	}
	return norm(v)
}

// TestRequestsConvertAsTheirJSON: a request converted from protobuf is
// what kfa reads of the same request's ProtoJSON on HTTP+JSON.
func TestRequestsConvertAsTheirJSON(t *testing.T) {
	raw := `{"tenant":"t","message":{"messageId":"m1","contextId":"c","taskId":"t1","role":"ROLE_USER","extensions":["urn:x"],` +
		`"referenceTaskIds":["t0"],"metadata":{"skill":"ask-network","n":[1,2]},"parts":[{"text":"hi","metadata":{"a":"b"}},` +
		`{"data":{"action":"ask","question":"q","n":1.5,"l":[true,null]},"mediaType":"application/json"},{"url":"https://x","filename":"f"},` +
		`{"raw":"AQID"}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":3,"returnImmediately":true,` +
		`"taskPushNotificationConfig":{"url":"https://h","token":"tok","authentication":{"scheme":"Bearer","credentials":"c"}}},` +
		`"metadata":{"skill":"knowledge-search"}}`
	var pb a2apb.SendMessageRequest
	if err := protojson.Unmarshal([]byte(raw), &pb); err != nil {
		t.Fatal(err)
	}
	got, err := sendRequestFromPB(&pb)
	if err != nil {
		t.Fatal(err)
	}
	var want a2a.SendMessageRequest
	if err := json.Unmarshal([]byte(raw), &want); err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !reflect.DeepEqual(normalized(t, gj), normalized(t, wj)) {
		t.Fatalf("converted:\n%s\nread from JSON:\n%s", gj, wj)
	}
}

func BenchmarkTaskToPB(b *testing.B) {
	task := sampleTask()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := taskToPB(&task); err != nil {
			b.Fatal(err)
		}
	}
}
