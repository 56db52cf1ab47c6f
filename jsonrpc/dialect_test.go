package jsonrpc_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrorShapeByDialect: every error a JSON-RPC caller can get comes in
// its dialect's shape. A 0.3 caller (no A2A-Version, or 0.3) gets data as
// one object with the reason; a 1.0 caller gets the array of typed
// details. Errors found before a method is known (the body, the envelope,
// an unknown method) follow the header; once the method is known, its
// name decides.
func TestErrorShapeByDialect(t *testing.T) {
	srv, err := fuzzServer()
	if err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + strings.Repeat("x", 300<<10) + `"}}`
	for _, tc := range []struct {
		name, body, contentType string
		code                    int // 0: any (the kind is httpkit's to choose)
		reason                  string
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`, "", -32601, "METHOD_NOT_FOUND"},
		{"parse error", `{"jsonrpc":`, "", -32700, "PARSE_ERROR"},
		{"invalid UTF-8", "\"\xff\"", "", -32700, "PARSE_ERROR"},
		{"duplicate keys", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tasks/get"}`, "", -32600, "INVALID_REQUEST"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`, "", -32600, "INVALID_REQUEST"},
		{"not an object", `42`, "", -32600, "INVALID_REQUEST"},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":1}`, "", -32600, "INVALID_REQUEST"},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"tasks/get"}`, "", -32600, "INVALID_REQUEST"},
		{"jsonrpc not 2.0", `{"jsonrpc":"1.0","id":1,"method":"tasks/get"}`, "", -32600, "INVALID_REQUEST"},
		{"no method", `{"jsonrpc":"2.0","id":1}`, "", -32600, "INVALID_REQUEST"},
		{"not JSON content", `{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`, "text/plain", 0, ""},
		{"too large", big, "", 0, ""},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":[]}`, "", -32602, "INVALID_PARAMS"},
		{"no credential", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}`, "", -31401, "UNAUTHENTICATED"},
	} {
		for _, version := range []string{"", "0.3", "1.0"} {
			t.Run(tc.name+" A2A-Version "+version, func(t *testing.T) {
				r := httptest.NewRequest("POST", "/a2a/jsonrpc", strings.NewReader(tc.body))
				ct := tc.contentType
				if ct == "" {
					ct = "application/json"
				}
				r.Header.Set("Content-Type", ct)
				if version != "" {
					r.Header.Set("A2A-Version", version)
				}
				w := httptest.NewRecorder()
				srv.Handler().ServeHTTP(w, r)
				var env struct {
					Error struct {
						Code int             `json:"code"`
						Data json.RawMessage `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || w.Code != 200 {
					t.Fatalf("HTTP %d: %s (%v)", w.Code, w.Body.Bytes(), err)
				}
				if tc.code != 0 && env.Error.Code != tc.code {
					t.Fatalf("code %d, want %d: %s", env.Error.Code, tc.code, w.Body.Bytes())
				}
				// A 0.3 method name (tasks/get) answers in 0.3 whatever the
				// header says; before the method is known, the header decides.
				v03 := version != "1.0" || tc.code == -32602 || tc.name == "no credential"
				var reason string
				if v03 {
					var data struct {
						Reason string `json:"reason"`
						Domain string `json:"domain"`
					}
					if err := json.Unmarshal(env.Error.Data, &data); err != nil || data.Domain == "" {
						t.Fatalf("0.3 wants data as an object with reason and domain: %s (%v)", w.Body.Bytes(), err)
					}
					reason = data.Reason
				} else {
					var data []struct {
						Type   string `json:"@type"`
						Reason string `json:"reason"`
					}
					if err := json.Unmarshal(env.Error.Data, &data); err != nil || len(data) == 0 || data[0].Type == "" {
						t.Fatalf("1.0 wants data as an array of typed details: %s (%v)", w.Body.Bytes(), err)
					}
					reason = data[0].Reason
				}
				if tc.reason != "" && reason != tc.reason {
					t.Fatalf("reason %q, want %q: %s", reason, tc.reason, w.Body.Bytes())
				}
			})
		}
	}
}
