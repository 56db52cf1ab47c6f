package mcpserver

import "testing"

func TestAdaptResponse(t *testing.T) {
	tests := []struct {
		name, version, msg, want string
	}{
		{"a list result, 2025-11-25", "2025-11-25",
			`{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"cacheScope":"public","tools":[{"name":"a<b"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a<b"}]}}`},
		{"version unknown", "",
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","prompts":[]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"prompts":[]}}`},
		{"2026-07-28 keeps them", "2026-07-28",
			`{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"cacheScope":"public","tools":[]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"cacheScope":"public","tools":[]}}`},
		{"a batch", "2025-03-26",
			`[{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"tools":[]}},{"jsonrpc":"2.0","id":2,"result":{}}]`,
			`[{"jsonrpc":"2.0","id":1,"result":{"tools":[]}},{"jsonrpc":"2.0","id":2,"result":{}}]`},
		{"the words in a tool's text", "2025-06-18",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"ttlMs\":5"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"ttlMs\":5"}]}}`},
		{"nothing to change", "2025-06-18", `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"initialize params that do not decode", "2025-06-18",
			`{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"handling 'initialize': unmarshaling \"x\""}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"handling 'initialize': unmarshaling \"x\""}}`},
		{"a call before initialize", "",
			`{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"method \"tools/list\" is invalid during session initialization"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"method \"tools/list\" is invalid during session initialization"}}`},
		{"another code-0 error", "",
			`{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"x"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`},
		{"a coded error", "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`},
		{"not JSON", "", `{"code":0`, `{"code":0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AdaptResponse([]byte(tc.msg), tc.version)); got != tc.want {
				t.Fatalf("AdaptResponse(%s, %q)\n got %s\nwant %s", tc.msg, tc.version, got, tc.want)
			}
		})
	}
}
