package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestCheckMessage: what kfa refuses before the SDK reads a message, with
// the JSON-RPC code and the id each refusal is answered with.
func TestCheckMessage(t *testing.T) {
	tests := []struct {
		name     string
		msg      string
		batches  bool
		wantCode int // 0: accepted
		wantID   string
		wantMsg  string
	}{
		{name: "a request", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{name: "a notification", msg: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "a response", msg: `{"jsonrpc":"2.0","id":"a","result":{}}`},
		{name: "an unknown method (the SDK's to answer)", msg: `{"jsonrpc":"2.0","id":1,"method":"foo/bar"}`},
		{name: "a batch", msg: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, batches: true},
		{name: "not JSON", msg: `{"jsonrpc":`, wantCode: -32700, wantMsg: "not valid JSON"},
		{name: "two values", msg: `{} {}`, wantCode: -32700, wantMsg: "not valid JSON"},
		{name: "invalid UTF-8", msg: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", wantCode: -32700, wantMsg: "UTF-8"},
		{name: "empty", msg: ``, wantCode: -32700, wantMsg: "empty"},
		{name: "a duplicate id", msg: `{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/list"}`, wantCode: -32600, wantMsg: `duplicate key "id"`},
		{name: "a duplicate method", msg: `{"jsonrpc":"2.0","id":5,"method":"ping","method":"tools/list"}`, wantCode: -32600, wantID: "5", wantMsg: `duplicate key "method"`},
		{name: "a duplicate tool name", msg: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","name":"b"}}`,
			wantCode: -32602, wantID: "5", wantMsg: `params: duplicate key "name"`},
		{name: "a duplicate argument", msg: `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"search","arguments":{"query":"a","query":"b"}}}`,
			wantCode: -32602, wantID: `"x"`, wantMsg: `params.arguments: duplicate key "query"`},
		{name: "a duplicate argument spelt with an escape", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"a","\u0071uery":"b"}}}`,
			wantCode: -32602, wantID: "1", wantMsg: `params.arguments: duplicate key "query"`},
		{name: "too deep", msg: `{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
			wantCode: -32600, wantID: "1", wantMsg: "deeper"},
		{name: "not an object", msg: `5`, wantCode: -32600, wantMsg: "must be a JSON object"},
		{name: "null", msg: `null`, wantCode: -32600, wantMsg: "must be a JSON object"},
		{name: "another version", msg: `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, wantCode: -32600, wantID: "7", wantMsg: `jsonrpc must be "2.0"`},
		{name: "no version", msg: `{"id":7,"method":"tools/list"}`, wantCode: -32600, wantID: "7", wantMsg: `jsonrpc must be "2.0"`},
		{name: "an object id", msg: `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, wantCode: -32600, wantMsg: "id must be"},
		{name: "a fractional id", msg: `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, wantCode: -32600, wantMsg: "id must be"},
		{name: "a method that is not a string", msg: `{"jsonrpc":"2.0","id":1,"method":5}`, wantCode: -32600, wantID: "1", wantMsg: "method must be a string"},
		{name: "neither request nor response", msg: `{"jsonrpc":"2.0"}`, wantCode: -32600, wantMsg: "needs a method"},
		{name: "a case variant of method", msg: `{"jsonrpc":"2.0","id":1,"METHOD":"ping"}`, wantCode: -32600, wantID: "1", wantMsg: `"METHOD" is not a member`},
		{name: "a case variant of id", msg: `{"jsonrpc":"2.0","id":1,"Id":2,"method":"ping"}`, wantCode: -32600, wantID: "1", wantMsg: `duplicate key "Id": it differs from "id" only in case`},
		{name: "a case variant of arguments", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","Arguments":{}}}`,
			wantCode: -32602, wantID: "1", wantMsg: `params: "Arguments" is not a tools/call parameter`},
		{name: "a folded name (long s)", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{},"_meta":{},"_meta\u017f":1}}`},
		{name: "a Kelvin sign", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{},"_meta":{},"tas\u212a":1}}`},
		{name: "an unknown parameter", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","task":{}}}`},
		{name: "a folded member", msg: `{"jsonrpc":"2.0","id":1,"method":"ping","param\u017f":{}}`, wantCode: -32600, wantID: "1", wantMsg: `(did you mean "params"?)`},
		{name: "a batch where none are taken", msg: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, wantCode: -32600, wantMsg: "batches are not supported"},
		{name: "an empty batch", msg: `[]`, batches: true, wantCode: -32600, wantMsg: "at least one"},
		{name: "a bad message in a batch", msg: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2,"method":"ping"}]`, batches: true,
			wantCode: -32600, wantMsg: `batch message 1: jsonrpc must be "2.0"`},
		{name: "a batch with one id twice", msg: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, batches: true,
			wantCode: -32600, wantMsg: "two requests with the id 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := CheckMessage([]byte(tc.msg), tc.batches)
			if tc.wantCode == 0 {
				if e != nil {
					t.Fatalf("refused: %d %s", e.Code, e.Message)
				}
				return
			}
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Code != tc.wantCode || string(e.ID) != tc.wantID || !strings.Contains(e.Message, tc.wantMsg) {
				t.Fatalf("got %d id %q %q; want %d id %q %q", e.Code, e.ID, e.Message, tc.wantCode, tc.wantID, tc.wantMsg)
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   jsonrpc.Error   `json:"error"`
			}
			if err := json.Unmarshal(e.Response(), &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error.Code != int64(tc.wantCode) {
				t.Fatalf("response %s: %v", e.Response(), err)
			}
			if want := tc.wantID; want == "" && string(resp.ID) != "null" || want != "" && string(resp.ID) != want {
				t.Fatalf("response id %s, want %q", resp.ID, want)
			}
		})
	}
}

func TestKeyPath(t *testing.T) {
	b := `{"a":1,"b":{"c":[{"d":2},{"e":3,"f":{"g":4}}],"h":"x"},"i":[[1,{"j":5}]]}`
	for _, tc := range []struct {
		key  string
		want string
	}{
		{`"a"`, "a"}, {`"b"`, "b"}, {`"c"`, "b.c"}, {`"d"`, "b.c.0.d"}, {`"e"`, "b.c.1.e"},
		{`"g"`, "b.c.1.f.g"}, {`"h"`, "b.h"}, {`"i"`, "i"}, {`"j"`, "i.0.1.j"},
		{`"x"`, ""}, // a string value, not a key
	} {
		off := strings.Index(b, tc.key)
		if got := strings.Join(keyPath([]byte(b), off), "."); got != tc.want {
			t.Errorf("keyPath at %s = %q, want %q", tc.key, got, tc.want)
		}
	}
}
