package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/server"
)

// TestChallengeWithoutCredential: every 401 of a request that sent no
// credential challenges without an error attribute (RFC 6750 §3.1: the
// client did not know authentication was needed), and the same request
// with a bad token is told error="invalid_token". Both bindings (JSON-RPC
// 1.0 and 0.3) and /api/v1, every route that needs a credential.
func TestChallengeWithoutCredential(t *testing.T) {
	// Every bad token below is a failed authentication: no limit on them.
	h := start(t, func(c *server.Config) { c.AuthFailRate = 0 })
	const (
		id      = "01JD0000000000000000000000"
		askBody = `{"message":{"role":"ROLE_USER","messageId":"c1","parts":[{"data":{"action":"ask","question":"Why does bbolt hang?"}}]},"configuration":{"returnImmediately":true}}`
		ask03   = `{"message":{"kind":"message","role":"user","messageId":"c1","parts":[{"kind":"data","data":{"action":"ask","question":"Why does bbolt hang?"}}]},"configuration":{"blocking":false}}`
		push    = `{"url":"https://hooks.example.com/kfa"}`
	)
	type call struct{ name, method, path, body string }
	rpc := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	}
	var calls []call
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/a2a/v1/tasks/" + id, ""},
		{"GET", "/a2a/v1/tasks", ""},
		{"POST", "/a2a/v1/tasks/" + id + ":cancel", "{}"},
		{"GET", "/a2a/v1/tasks/" + id + ":subscribe", ""},
		{"POST", "/a2a/v1/tasks/" + id + ":subscribe", "{}"},
		{"POST", "/a2a/v1/message:send", askBody},
		{"POST", "/a2a/v1/message:stream", askBody},
		{"POST", "/a2a/v1/tasks/" + id + "/pushNotificationConfigs", push},
		{"GET", "/a2a/v1/tasks/" + id + "/pushNotificationConfigs", ""},
		{"GET", "/a2a/v1/tasks/" + id + "/pushNotificationConfigs/c1", ""},
		{"DELETE", "/a2a/v1/tasks/" + id + "/pushNotificationConfigs/c1", ""},
		{"POST", "/api/v1/discussions/" + id + "/replies", `{"body":"an answer"}`},
		{"GET", "/api/v1/inbox", ""},
		{"POST", "/api/v1/inbox:ack", `{"ids":["x"]}`},
		{"GET", "/api/v1/whoami", ""},
	} {
		calls = append(calls, call{c.method + " " + c.path, c.method, c.path, c.body})
	}
	for _, c := range []struct{ method, params string }{
		{"GetTask", `{"id":"` + id + `"}`},
		{"ListTasks", `{}`},
		{"CancelTask", `{"id":"` + id + `"}`},
		{"SubscribeToTask", `{"id":"` + id + `"}`},
		{"SendMessage", askBody},
		{"SendStreamingMessage", askBody},
		{"CreateTaskPushNotificationConfig", `{"taskId":"` + id + `","url":"https://hooks.example.com/kfa"}`},
		{"GetTaskPushNotificationConfig", `{"taskId":"` + id + `","id":"c1"}`},
		{"ListTaskPushNotificationConfigs", `{"taskId":"` + id + `"}`},
		{"DeleteTaskPushNotificationConfig", `{"taskId":"` + id + `","id":"c1"}`},
		{"tasks/get", `{"id":"` + id + `"}`},
		{"tasks/cancel", `{"id":"` + id + `"}`},
		{"tasks/resubscribe", `{"id":"` + id + `"}`},
		{"message/send", ask03},
		{"message/stream", ask03},
		{"tasks/pushNotificationConfig/get", `{"id":"` + id + `"}`},
		{"tasks/pushNotificationConfig/list", `{"id":"` + id + `"}`},
		{"tasks/pushNotificationConfig/delete", `{"id":"` + id + `","pushNotificationConfigId":"c1"}`},
	} {
		calls = append(calls, call{"JSON-RPC " + c.method, "POST", "/a2a/jsonrpc", rpc(c.method, c.params)})
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			for _, tc := range []struct {
				token, want string
			}{
				{"", `Bearer realm="kfa"`},
				{"kfa_bad", `Bearer realm="kfa", error="invalid_token", error_description="`},
			} {
				resp, body := h.raw(c.method, c.path, a2aHeaders(tc.token), c.body)
				if c.path != "/a2a/jsonrpc" && resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("token %q: status %d, want 401: %s", tc.token, resp.StatusCode, body)
				}
				if c.path == "/a2a/jsonrpc" && !strings.Contains(string(body), `"code":-31401`) {
					t.Fatalf("token %q: not an authentication error: %s", tc.token, body)
				}
				got := resp.Header.Get("WWW-Authenticate")
				if tc.token == "" && got != tc.want || tc.token != "" && !strings.HasPrefix(got, tc.want) {
					t.Fatalf("token %q: WWW-Authenticate %q, want %q", tc.token, got, tc.want)
				}
			}
		})
	}
}
