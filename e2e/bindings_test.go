package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/prototest"
	"github.com/kfa-project/kfa/server"
)

// outcome is what an operation came to, in terms every binding shares.
type outcome struct {
	kind   string // "task", "message", "list" or "error"
	state  string // the task's state as a 1.0 name
	id     string // the task id
	reason string // the ErrorInfo reason of an error
	total  int    // totalSize of a list
}

func (o outcome) String() string {
	if o.kind == "error" {
		return "error " + o.reason
	}
	return fmt.Sprintf("%s %s", o.kind, o.state)
}

// binding runs the A2A operations over one wire format.
type binding interface {
	name() string
	send(token string, req a2a.SendMessageRequest) outcome
	get(token, id string) outcome
	cancel(token, id string) outcome
	list(token string) outcome // 0.3 has no tasks/list: kind "unsupported"
	extendedCard(token string) outcome
	push(token, id string) outcome
}

// restBinding is HTTP+JSON.
type restBinding struct {
	t *testing.T
	h *harness
}

func (b restBinding) name() string { return "HTTP+JSON" }

func (b restBinding) do(method, path, token, body string) ([]byte, int) {
	resp, raw := b.h.raw(method, path, a2aHeaders(token), body)
	return raw, resp.StatusCode
}

func restOutcome(t *testing.T, raw []byte, status int, proto string) outcome {
	t.Helper()
	if status != 200 {
		return outcome{kind: "error", reason: reason(raw)}
	}
	if proto != "" {
		prototest.Valid(t, proto, raw)
	}
	var v struct {
		a2a.Task
		T         *a2a.Task    `json:"task"`
		M         *a2a.Message `json:"message"`
		Tasks     []a2a.Task   `json:"tasks"`
		TotalSize int          `json:"totalSize"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	switch {
	case v.T != nil:
		return outcome{kind: "task", state: string(v.T.Status.State), id: v.T.ID}
	case v.M != nil:
		return outcome{kind: "message", state: string(v.M.Role)}
	case v.Tasks != nil:
		return outcome{kind: "list", total: v.TotalSize}
	}
	return outcome{kind: "task", state: string(v.Status.State), id: v.ID}
}

func (b restBinding) send(token string, req a2a.SendMessageRequest) outcome {
	raw, st := b.do("POST", "/a2a/v1/message:send", token, mustJSON(req))
	return restOutcome(b.t, raw, st, prototest.SendMessageResponse)
}
func (b restBinding) get(token, id string) outcome {
	raw, st := b.do("GET", "/a2a/v1/tasks/"+id, token, "")
	return restOutcome(b.t, raw, st, prototest.Task)
}
func (b restBinding) cancel(token, id string) outcome {
	raw, st := b.do("POST", "/a2a/v1/tasks/"+id+":cancel", token, "")
	return restOutcome(b.t, raw, st, prototest.Task)
}
func (b restBinding) list(token string) outcome {
	raw, st := b.do("GET", "/a2a/v1/tasks?pageSize=100", token, "")
	return restOutcome(b.t, raw, st, prototest.ListTasksResponse)
}
func (b restBinding) push(token, id string) outcome {
	raw, st := b.do("GET", "/a2a/v1/tasks/"+id+"/pushNotificationConfigs", token, "")
	return restConfigsOutcome(b.t, raw, st)
}

// rpcBinding is JSON-RPC with the 1.0 method names, or the 0.3 ones and
// 0.3 shapes when v03 is set.
type rpcBinding struct {
	t   *testing.T
	h   *harness
	v03 bool
	n   int
}

func (b *rpcBinding) name() string {
	if b.v03 {
		return "JSON-RPC 0.3"
	}
	return "JSON-RPC 1.0"
}

// call posts one JSON-RPC request and returns the raw result or the error's
// reason. It checks the envelope: HTTP 200, jsonrpc 2.0, the same id.
func (b *rpcBinding) call(token, method string, params any) (json.RawMessage, string) {
	b.t.Helper()
	b.n++
	id := fmt.Sprintf("req-%d", b.n)
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest("POST", b.h.url+"/a2a/jsonrpc", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if !b.v03 {
		req.Header.Set("A2A-Version", "1.0")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		b.t.Fatalf("%s: HTTP %d (JSON-RPC answers 200): %s", method, resp.StatusCode, raw)
	}
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.JSONRPC != "2.0" || env.ID != id {
		b.t.Fatalf("%s: bad envelope: %s", method, raw)
	}
	if env.Error != nil {
		return nil, rpcReason(b.t, env.Error.Data, b.v03)
	}
	return env.Result, ""
}

// rpcReason reads the reason out of a JSON-RPC error's data: an array of
// typed details in 1.0, an object in 0.3.
func rpcReason(t *testing.T, data json.RawMessage, v03 bool) string {
	t.Helper()
	if v03 {
		var d struct {
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("0.3 error data must be an object: %s", data)
		}
		return d.Reason
	}
	var ds []map[string]any
	if err := json.Unmarshal(data, &ds); err != nil || len(ds) == 0 || ds[0]["@type"] != a2a.TypeErrorInfo {
		t.Fatalf("1.0 error data must be typed details, ErrorInfo first: %s", data)
	}
	r, _ := ds[0]["reason"].(string)
	return r
}

func (b *rpcBinding) outcome(res json.RawMessage, reason, proto string) outcome {
	b.t.Helper()
	if reason != "" {
		return outcome{kind: "error", reason: reason}
	}
	if b.v03 {
		var v struct {
			Kind   string `json:"kind"`
			ID     string `json:"id"`
			Role   string `json:"role"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		}
		if err := json.Unmarshal(res, &v); err != nil {
			b.t.Fatalf("%s: %v", res, err)
		}
		switch v.Kind {
		case "task":
			return outcome{kind: "task", state: "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(v.Status.State, "-", "_")), id: v.ID}
		case "message":
			return outcome{kind: "message", state: "ROLE_" + strings.ToUpper(v.Role)}
		}
		b.t.Fatalf("0.3 result without a known kind: %s", res)
	}
	if proto != "" {
		prototest.Valid(b.t, proto, res)
	}
	return restOutcome(b.t, res, 200, "")
}

func (b *rpcBinding) send(token string, req a2a.SendMessageRequest) outcome {
	if b.v03 {
		res, r := b.call(token, "message/send", toV03Params(req))
		return b.outcome(res, r, "")
	}
	res, r := b.call(token, "SendMessage", req)
	return b.outcome(res, r, prototest.SendMessageResponse)
}

func (b *rpcBinding) get(token, id string) outcome {
	m := "GetTask"
	if b.v03 {
		m = "tasks/get"
	}
	res, r := b.call(token, m, map[string]any{"id": id})
	return b.outcome(res, r, prototest.Task)
}

func (b *rpcBinding) cancel(token, id string) outcome {
	m := "CancelTask"
	if b.v03 {
		m = "tasks/cancel"
	}
	res, r := b.call(token, m, map[string]any{"id": id})
	return b.outcome(res, r, prototest.Task)
}

func (b *rpcBinding) list(token string) outcome {
	if b.v03 {
		return outcome{kind: "unsupported"}
	}
	res, r := b.call(token, "ListTasks", map[string]any{"pageSize": 100})
	return b.outcome(res, r, prototest.ListTasksResponse)
}

func (b *rpcBinding) push(token, id string) outcome {
	m := "ListTaskPushNotificationConfigs"
	if b.v03 {
		m = "tasks/pushNotificationConfig/list"
	}
	res, r := b.call(token, m, map[string]any{"taskId": id, "id": id})
	if r != "" {
		return outcome{kind: "error", reason: r}
	}
	return configsOutcome(b.t, res)
}

// toV03Params turns a 1.0 request into 0.3 message/send params: kind
// discriminators, lowercase roles, and blocking as the inverse of
// returnImmediately (absent or false returnImmediately means blocking).
func toV03Params(req a2a.SendMessageRequest) map[string]any {
	var parts []map[string]any
	for _, p := range req.Message.Parts {
		switch {
		case p.Text != nil:
			parts = append(parts, map[string]any{"kind": "text", "text": *p.Text})
		case p.Data != nil:
			parts = append(parts, map[string]any{"kind": "data", "data": json.RawMessage(p.Data)})
		case p.URL != nil:
			parts = append(parts, map[string]any{"kind": "file", "file": map[string]any{"uri": *p.URL}})
		}
	}
	role := "user"
	if req.Message.Role == a2a.RoleAgent {
		role = "agent"
	}
	msg := map[string]any{"kind": "message", "messageId": req.Message.MessageID, "role": role, "parts": parts}
	if req.Message.TaskID != "" {
		msg["taskId"] = req.Message.TaskID
	}
	if len(req.Message.Metadata) > 0 {
		msg["metadata"] = json.RawMessage(req.Message.Metadata)
	}
	blocking := req.Configuration == nil || req.Configuration.ReturnImmediately == nil || !*req.Configuration.ReturnImmediately
	return map[string]any{"message": msg, "configuration": map[string]any{"blocking": blocking}}
}

func textReq(msgID, text string) a2a.SendMessageRequest {
	return a2a.SendMessageRequest{Message: &a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text)}}}
}

func dataReq(msgID, data string, returnNow bool) a2a.SendMessageRequest {
	r := a2a.SendMessageRequest{Message: &a2a.Message{MessageID: msgID, Role: a2a.RoleUser,
		Parts: []a2a.Part{a2a.DataPart(json.RawMessage(data))}}}
	if returnNow {
		yes := true
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: &yes}
	}
	return r
}

// TestBindingsBehaveAlike runs one scenario table through HTTP+JSON,
// JSON-RPC with the 1.0 names, JSON-RPC with the 0.3 names and shapes,
// and gRPC: every step must come to the same outcome on each.
func TestBindingsBehaveAlike(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 0; withGRPC(c) })
	for _, b := range []binding{restBinding{t: t, h: h}, &rpcBinding{t: t, h: h}, &rpcBinding{t: t, h: h, v03: true},
		grpcBinding{t: t, c: h.grpcClient()}} {
		t.Run(b.name(), func(t *testing.T) {
			tag := strings.NewReplacer(" ", "", ".", "", "+", "").Replace(b.name())
			alice, _ := h.agent("alice-" + tag)
			bob, bc := h.agent("bob-" + tag)
			reader, _ := h.agent("reader-"+tag, "read")

			asked := b.send(alice.Token, dataReq("ask-1", `{"action":"ask","question":"Which binding is this?"}`, true))
			if asked.kind != "task" || asked.state != "TASK_STATE_WORKING" {
				t.Fatalf("ask: %v", asked)
			}
			done := b.send(alice.Token, dataReq("ask-2", `{"action":"ask","question":"Will it be answered?"}`, true))
			task, err := bc.WithToken(alice.Token).GetTask(bg(), done.id, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bc.Reply(bg(), discussionOf(t, task), "yes"); err != nil {
				t.Fatal(err)
			}
			retry := b.send(alice.Token, dataReq("ask-1", `{"action":"ask","question":"again"}`, true))
			if retry.id != asked.id {
				t.Fatalf("retry gave another task: %v vs %v", retry.id, asked.id)
			}
			steps := []struct {
				name string
				got  outcome
				want string
			}{
				{"search by text", b.send("", textReq("s1", "bbolt timeout")), "message ROLE_AGENT"},
				{"search by data", b.send("", dataReq("s2", `{"action":"search","query":"timeout","limit":2}`, false)), "message ROLE_AGENT"},
				{"search by skill in metadata", b.send("", withMeta(textReq("s3", "timeout"), `{"skill":"knowledge-search"}`)), "message ROLE_AGENT"},
				{"search by skill-id text part", b.send("", a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "s4", Role: a2a.RoleUser,
					Parts: []a2a.Part{a2a.TextPart("knowledge-search"), a2a.TextPart("timeout")}}}), "message ROLE_AGENT"},
				{"ask by skill with text", b.send(alice.Token, withReturn(withMeta(textReq("ask-3", "Is a text question fine?"), `{"skill":"ask-network"}`))), "task TASK_STATE_WORKING"},
				{"unknown skill", b.send("", withMeta(textReq("s5", "x"), `{"skill":"weather"}`)), "error INVALID_PARAMS"},
				{"limit out of range", b.send("", dataReq("s6", `{"action":"search","query":"x","limit":9}`, false)), "error INVALID_PARAMS"},
				{"ask without returnImmediately", b.send(alice.Token, dataReq("ask-4", `{"action":"ask","question":"q"}`, false)), "error UNSUPPORTED_OPERATION"},
				{"ask anonymously", b.send("", dataReq("ask-5", `{"action":"ask","question":"q"}`, true)), "error UNAUTHENTICATED"},
				{"ask with read scope", b.send(reader.Token, dataReq("ask-6", `{"action":"ask","question":"q"}`, true)), "error INSUFFICIENT_SCOPE"},
				{"url part", b.send("", a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "s7", Role: a2a.RoleUser,
					Parts: []a2a.Part{{URL: strPtr("http://example.com/x")}}}}), "error CONTENT_TYPE_NOT_SUPPORTED"},
				{"message to a task", b.send(alice.Token, a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m9", TaskID: asked.id,
					Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("more")}}}), "error UNSUPPORTED_OPERATION"},
				{"get own", b.get(alice.Token, asked.id), "task TASK_STATE_WORKING"},
				{"get answered", b.get(alice.Token, done.id), "task TASK_STATE_COMPLETED"},
				{"get foreign", b.get(bob.Token, asked.id), "error TASK_NOT_FOUND"},
				{"get missing", b.get(alice.Token, "01JD0000000000000000000000"), "error TASK_NOT_FOUND"},
				{"get anonymously", b.get("", asked.id), "error UNAUTHENTICATED"},
				{"get with a bad token", b.get("kfa_nope", asked.id), "error UNAUTHENTICATED"},
				{"cancel foreign", b.cancel(bob.Token, asked.id), "error TASK_NOT_FOUND"},
				{"cancel completed", b.cancel(alice.Token, done.id), "error TASK_NOT_CANCELABLE"},
				{"cancel", b.cancel(alice.Token, asked.id), "task TASK_STATE_CANCELED"},
				{"cancel again", b.cancel(alice.Token, asked.id), "task TASK_STATE_CANCELED"},
				{"extended card", b.extendedCard(alice.Token), "card alice-" + tag},
				{"extended card anonymously", b.extendedCard(""), "card anonymous"},
				{"extended card with a bad token", b.extendedCard("kfa_nope"), "error UNAUTHENTICATED"},
				{"push configs", b.push(alice.Token, asked.id), "configs 0"},
				{"push configs foreign", b.push(bob.Token, asked.id), "error TASK_NOT_FOUND"},
				{"push configs missing", b.push(alice.Token, "01JD0000000000000000000000"), "error TASK_NOT_FOUND"},
			}
			for _, s := range steps {
				if s.got.String() != s.want {
					t.Errorf("%s: got %s, want %s", s.name, s.got, s.want)
				}
			}
			if l := b.list(alice.Token); l.kind != "unsupported" && (l.kind != "list" || l.total != 3) {
				t.Errorf("list: %+v", l)
			}
		})
	}
}

func withMeta(r a2a.SendMessageRequest, meta string) a2a.SendMessageRequest {
	r.Message.Metadata = json.RawMessage(meta)
	return r
}

func withReturn(r a2a.SendMessageRequest) a2a.SendMessageRequest {
	yes := true
	r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: &yes}
	return r
}

func strPtr(s string) *string { return &s }

// TestJSONRPCEnvelope covers the JSON-RPC protocol errors and notifications
// (jsonrpc's TestErrorShapeByDialect has each of them in both dialects).
func TestJSONRPCEnvelope(t *testing.T) {
	h := start(t, nil)
	alice, _ := h.agent("alice")
	post := func(headers map[string]string, body string) (*http.Response, []byte) {
		if headers == nil {
			headers = map[string]string{"Content-Type": "application/json"}
		}
		return h.raw("POST", "/a2a/jsonrpc", headers, body)
	}
	before := h.digest()
	for _, tc := range []struct {
		name    string
		headers map[string]string
		body    string
		code    int
		id      string
	}{
		{"parse error", nil, `{"jsonrpc":"2.0",`, -32700, "null"},
		{"invalid UTF-8", nil, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", -32700, "null"},
		{"batch", nil, `[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`, -32600, "null"},
		{"not an object", nil, `"GetTask"`, -32600, "null"},
		{"no jsonrpc", nil, `{"id":1,"method":"GetTask"}`, -32600, "1"},
		{"wrong jsonrpc", nil, `{"jsonrpc":"1.0","id":1,"method":"GetTask"}`, -32600, "1"},
		{"no method", nil, `{"jsonrpc":"2.0","id":"a"}`, -32600, `"a"`},
		{"method not a string", nil, `{"jsonrpc":"2.0","id":"a","method":7}`, -32600, "null"},
		{"object id", nil, `{"jsonrpc":"2.0","id":{},"method":"GetTask"}`, -32600, "null"},
		{"duplicate keys", nil, `{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask"}`, -32600, "null"},
		{"unknown method", nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`, -32601, "1"},
		{"params array", nil, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}`, -32602, "1"},
		{"params wrong type", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + alice.Token},
			`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`, -32602, "1"},
		{"missing id param", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + alice.Token},
			`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, -32602, "1"},
		{"unsupported version", map[string]string{"Content-Type": "application/json", "A2A-Version": "2.0"},
			`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, -32009, "1"},
		{"wrong content type", map[string]string{"Content-Type": "text/plain"}, `{"jsonrpc":"2.0","id":1,"method":"GetTask"}`, -32005, "null"},
		{"too large", nil, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"` + strings.Repeat("a", 300<<10) + `"}}`, -32600, "null"},
		{"unauthenticated", nil, `{"jsonrpc":"2.0","id":9,"method":"ListTasks"}`, -31401, "9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, raw := post(tc.headers, tc.body)
			if resp.StatusCode != 200 {
				t.Fatalf("HTTP %d, want 200: %s", resp.StatusCode, raw)
			}
			var env struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code    int             `json:"code"`
					Message string          `json:"message"`
					Data    json.RawMessage `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatal(err)
			}
			if env.Error.Code != tc.code || string(env.ID) != tc.id || env.Error.Message == "" {
				t.Fatalf("got code %d id %s, want %d id %s: %s", env.Error.Code, env.ID, tc.code, tc.id, raw)
			}
			// Without A2A-Version the caller speaks 0.3: an error found
			// before the method is known is in 0.3's shape; after, the
			// method's (GetTask and ListTasks are 1.0's).
			_, versioned := tc.headers["A2A-Version"]
			methodKnown := tc.code != -32700 && tc.code != -32600 && tc.code != -32601 && tc.code != -32005
			rpcReason(t, env.Error.Data, !versioned && !methodKnown)
		})
	}
	// The unknown method is named in the message.
	_, raw := post(nil, `{"jsonrpc":"2.0","id":1,"method":"Frobnicate"}`)
	if !bytes.Contains(raw, []byte("Frobnicate")) {
		t.Fatalf("unknown method not named: %s", raw)
	}
	// A notification runs and gets no body.
	resp, raw := post(map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer " + alice.Token},
		`{"jsonrpc":"2.0","method":"SendMessage","params":`+mustJSON(askReq("note-1", "asked by a notification", nil))+`}`)
	if resp.StatusCode != http.StatusNoContent || len(raw) != 0 {
		t.Fatalf("notification: %d %q", resp.StatusCode, raw)
	}
	if h.digest() == before {
		t.Fatal("the notification's ask did not run")
	}
	// The trailing-slash path is the same endpoint.
	resp, raw = h.raw("POST", "/a2a/jsonrpc/", map[string]string{"Content-Type": "application/json"}, `{"jsonrpc":"2.0","id":1,"method":"Nope"}`)
	if resp.StatusCode != 200 || !bytes.Contains(raw, []byte("-32601")) {
		t.Fatalf("/a2a/jsonrpc/: %d %s", resp.StatusCode, raw)
	}
	// snake_case params, as the A2A conformance kit sends them.
	_, ac := h.agent("carol")
	tk := h.ask(ac, "c1", "snake?")
	_, raw = post(map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer " + tokenOf(ac)},
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+tk.ID+`","history_length":0}}`)
	if !bytes.Contains(raw, []byte(`"TASK_STATE_WORKING"`)) || bytes.Contains(raw, []byte(`"history"`)) {
		t.Fatalf("snake_case history_length: %s", raw)
	}
	_, raw = post(map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer " + tokenOf(ac)},
		`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"context_id":"`+tk.ContextID+`","page_size":1,"status":2}}`)
	if !bytes.Contains(raw, []byte(`"totalSize":1`)) {
		t.Fatalf("snake_case list params and numeric status: %s", raw)
	}
}
