package a2a_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/prototest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("%s differs from golden:\n got: %s\nwant: %s", name, buf.Bytes(), want)
	}
}

func sampleTask() a2a.Task {
	q := "How do I take a hot backup of a bbolt file?"
	reply := "Use Tx.WriteTo inside a read transaction."
	at := a2a.FormatTime(time.Date(2026, 12, 2, 10, 30, 0, 123_000_000, time.UTC))
	return a2a.Task{
		ID:        "01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
		ContextID: "01JD0Z6X8Q4Y4K2V1T3S5R7P9P",
		Status: a2a.TaskStatus{
			State:     a2a.TaskStateCompleted,
			Timestamp: at,
			Message: &a2a.Message{MessageID: "reply-1", ContextID: "01JD0Z6X8Q4Y4K2V1T3S5R7P9P", TaskID: "01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
				Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("bob replied")}},
		},
		Artifacts: []a2a.Artifact{{ArtifactID: "reply-1", Name: "reply",
			Parts: []a2a.Part{a2a.TextPart(reply), a2a.DataPart(json.RawMessage(`{"discussionId":"d1","replyId":"r1","authorId":"a2","authorName":"bob"}`))}}},
		History: []a2a.Message{{MessageID: "m1", ContextID: "01JD0Z6X8Q4Y4K2V1T3S5R7P9P", TaskID: "01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
			Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(json.RawMessage(`{"action":"ask","question":"` + q + `"}`))}}},
		Metadata: json.RawMessage(`{"discussionId":"d1"}`),
	}
}

func TestWireShapes(t *testing.T) {
	task := sampleTask()
	working := a2a.Task{ID: "t2", ContextID: "c2", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: "2026-12-02T10:30:00.000Z"},
		Artifacts: []a2a.Artifact{}}
	for _, tc := range []struct {
		name  string
		proto string
		v     any
	}{
		{"task.json", prototest.Task, task},
		{"send_message_response_task.json", prototest.SendMessageResponse, a2a.SendMessageResponse{Task: &task}},
		{"send_message_response_message.json", prototest.SendMessageResponse, a2a.SendMessageResponse{Message: task.Status.Message}},
		{"list_tasks_response.json", prototest.ListTasksResponse, a2a.ListTasksResponse{Tasks: []a2a.Task{task, working}, NextPageToken: "", PageSize: 50, TotalSize: 2}},
		{"list_tasks_response_empty.json", prototest.ListTasksResponse, a2a.ListTasksResponse{Tasks: []a2a.Task{}, PageSize: 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			prototest.Valid(t, tc.proto, b)
			golden(t, tc.name, b)
		})
	}
}

func TestErrorBody(t *testing.T) {
	e := a2a.Errorf(a2a.TaskNotFound, "task t1 not found").With("taskId", "t1")
	b, _ := json.Marshal(e.Status())
	golden(t, "error_task_not_found.json", b)

	bad := a2a.BadParam("pageSize", "must be between 1 and %d", 100)
	b, _ = json.Marshal(bad.Status())
	golden(t, "error_invalid_params.json", b)

	rl := &a2a.Error{Kind: a2a.RateLimited, Message: "too many asks", RetryAfter: 11500 * time.Millisecond}
	b, _ = json.Marshal(rl.Status())
	golden(t, "error_rate_limited.json", b)
}

func TestErrorTable(t *testing.T) {
	// The v1.0.1 table (a2a-v1.md §4) and the standard JSON-RPC codes.
	for _, tc := range []struct {
		k      a2a.Kind
		code   int
		status int
		reason string
	}{
		{a2a.TaskNotFound, -32001, 404, "TASK_NOT_FOUND"},
		{a2a.TaskNotCancelable, -32002, 400, "TASK_NOT_CANCELABLE"},
		{a2a.PushNotificationNotSupp, -32003, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{a2a.UnsupportedOperation, -32004, 400, "UNSUPPORTED_OPERATION"},
		{a2a.ContentTypeNotSupported, -32005, 400, "CONTENT_TYPE_NOT_SUPPORTED"},
		{a2a.InvalidAgentResponse, -32006, 500, "INVALID_AGENT_RESPONSE"},
		{a2a.ExtendedCardNotConfigured, -32007, 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{a2a.ExtensionSupportRequired, -32008, 400, "EXTENSION_SUPPORT_REQUIRED"},
		{a2a.VersionNotSupported, -32009, 400, "VERSION_NOT_SUPPORTED"},
		{a2a.ParseError, -32700, 400, "PARSE_ERROR"},
		{a2a.InvalidRequest, -32600, 400, "INVALID_REQUEST"},
		{a2a.MethodNotFound, -32601, 404, "METHOD_NOT_FOUND"},
		{a2a.InvalidParams, -32602, 400, "INVALID_PARAMS"},
		{a2a.Internal, -32603, 500, "INTERNAL"},
		{a2a.PermissionDenied, -31403, 403, "INSUFFICIENT_SCOPE"},
		{a2a.OwnContent, -31403, 403, "OWN_CONTENT"},
		{a2a.NotAsker, -31403, 403, "NOT_ASKER"},
	} {
		if tc.k.RPCCode != tc.code || tc.k.HTTPStatus != tc.status || tc.k.Reason != tc.reason {
			t.Errorf("%s: got (%d, %d, %s), want (%d, %d, %s)", tc.k.Name, tc.k.RPCCode, tc.k.HTTPStatus, tc.k.Reason, tc.code, tc.status, tc.reason)
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 12 * time.Second: 12} {
		if got := a2a.RetryAfterSeconds(d); got != want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", d, got, want)
		}
	}
}

func TestFormatTime(t *testing.T) {
	loc := time.FixedZone("x", 3600)
	got := a2a.FormatTime(time.Date(2026, 12, 2, 11, 30, 0, 5_000_000, loc))
	if got != "2026-12-02T10:30:00.005Z" {
		t.Fatalf("FormatTime = %s", got)
	}
}
