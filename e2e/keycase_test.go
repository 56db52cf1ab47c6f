package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysDifferingOnlyInCase: encoding/json takes "MESSAGEID" and
// "meſſageId" (long s) for messageId, and of two keys that fold alike
// keeps the last. Every JSON body refuses both with 400 naming the key, so
// what kfa reads is what the client wrote: A2A on both bindings (JSON-RPC
// envelope and params, 1.0 and 0.3, the data part and an inline push
// config included), /api/v1 and the operator's API. Nothing is written.
func TestKeysDifferingOnlyInCase(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	tk := h.ask(ac, "a1", "Which keys does kfa read?")
	disc := discussionOf(t, tk)
	msg := func(m string) string {
		return `{"message":{"role":"ROLE_USER",` + m + `,"parts":[{"text":"bbolt timeout"}]}}`
	}
	data := func(d string) string {
		return `{"message":{"role":"ROLE_USER","messageId":"d1","parts":[{"data":` + d + `}]}}`
	}
	rpc := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	}
	const (
		rest  = "/a2a/v1/message:send"
		jrpc  = "/a2a/jsonrpc"
		push  = "https://hooks.example.com/kfa"
		msg03 = `"kind":"message","role":"user","parts":[{"kind":"text","text":"bbolt"}]`
	)
	for _, tc := range []struct {
		name, path, body string
		want             string // in the error: the key, named
	}{
		{"upper case", rest, msg(`"MESSAGEID":"m1"`), `message.MESSAGEID: is not a field name`},
		{"one letter", rest, msg(`"messageID":"m1"`), `message.messageID: is not a field name`},
		{"long s", rest, msg(`"meſſageId":"m1"`), `message.meſſageId: is not a field name`},
		{"both spellings", rest, msg(`"messageId":"m1","MESSAGEID":"m2"`), `duplicate key \"MESSAGEID\": it differs from \"messageId\" only in case`},
		{"long s beside the field", rest, msg(`"messageId":"m1","meſſageId":"m2"`), `duplicate key \"meſſageId\"`},
		{"a part", rest, `{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"TEXT":"x"}]}}`, `message.parts[0].TEXT`},
		{"the configuration", rest, `{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"x"}]},"configuration":{"ReturnImmediately":true}}`,
			`configuration.ReturnImmediately`},
		{"a data key", rest, data(`{"action":"search","QUERY":"bbolt"}`), `data.QUERY: is not a field name`},
		{"two data keys", rest, data(`{"action":"search","query":"a","Query":"b"}`), `duplicate key \"Query\"`},
		{"an inline push config", rest, `{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"data":{"action":"ask","question":"q"}}]},` +
			`"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"URL":"` + push + `"}}}`,
			`configuration.taskPushNotificationConfig.URL`},
		{"a push config", "/a2a/v1/tasks/" + tk.ID + "/pushNotificationConfigs", `{"Url":"` + push + `"}`, `Url: is not a field name`},
		{"a cancel", "/a2a/v1/tasks/" + tk.ID + ":cancel", `{"METADATA":{}}`, `METADATA: is not a field name`},
		{"JSON-RPC envelope", jrpc, `{"jsonrpc":"2.0","id":1,"METHOD":"GetTask"}`, `METHOD: is not a field name`},
		{"JSON-RPC params", jrpc, rpc("SendMessage", msg(`"MessageId":"m1"`)), `params.message.MessageId: is not a field name`},
		{"JSON-RPC snake_case params", jrpc, rpc("ListTasks", `{"Page_Size":1}`), `params.Page_Size`},
		{"JSON-RPC params keys", jrpc, rpc("GetTask", `{"id":"`+tk.ID+`","ID":"x"}`), `duplicate key \"ID\"`},
		{"JSON-RPC 0.3 params", jrpc, rpc("message/send", `{"message":{`+msg03+`,"MESSAGEID":"m1"}}`), `params.message.MESSAGEID`},
		{"JSON-RPC 0.3 push config", jrpc, rpc("message/send", `{"message":{`+msg03+`,"messageId":"m1"},`+
			`"configuration":{"pushNotificationConfig":{"URL":"`+push+`"}}}`), `configuration.pushNotificationConfig.URL`},
		{"a reply", "/api/v1/discussions/" + disc + "/replies", `{"BODY":"an answer"}`, `BODY: is not a field of a reply`},
		{"a reply twice", "/api/v1/discussions/" + disc + "/replies", `{"body":"a","BODY":"b"}`, `duplicate key \"BODY\"`},
		{"an inbox ack", "/api/v1/inbox:ack", `{"IDS":["x"]}`, `IDS: is not a field name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.digest()
			resp, body := h.raw("POST", tc.path, a2aHeaders(alice.Token), tc.body)
			isRPC := tc.path == jrpc
			if !isRPC && resp.StatusCode != http.StatusBadRequest || isRPC && !strings.Contains(string(body), `"code":-326`) {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if !strings.Contains(string(body), tc.want) {
				t.Fatalf("the error does not name the key (%s): %s", tc.want, body)
			}
			if h.digest() != before {
				t.Fatal("the store changed")
			}
		})
	}

	// The operator's API, over its socket.
	admin := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(h.cfg.DataDir, "kfa.sock"))
	}}}
	for body, want := range map[string]string{
		`{"NAME":"carol","scopes":["read"]}`:               `NAME: is not a field name`,
		`{"name":"carol","Name":"dave","scopes":["read"]}`: `duplicate key \"Name\"`,
	} {
		resp, err := admin.Post("http://kfa/admin/v1/agents", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), want) {
			t.Errorf("admin %s: %d %s", body, resp.StatusCode, b)
		}
	}
}
