package mcpserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPreferSSE(t *testing.T) {
	tests := []struct {
		name    string
		accept  []string
		wantSSE bool
		wantOK  bool
	}{
		{name: "no Accept", wantOK: true},
		{name: "both, as MCP clients send", accept: []string{"application/json, text/event-stream"}, wantOK: true},
		{name: "both, SSE first", accept: []string{"text/event-stream, application/json"}, wantOK: true},
		{name: "JSON only", accept: []string{"application/json"}, wantOK: true},
		{name: "SSE only", accept: []string{"text/event-stream"}, wantSSE: true, wantOK: true},
		{name: "SSE preferred by quality", accept: []string{"application/json;q=0.5, text/event-stream"}, wantSSE: true, wantOK: true},
		{name: "two headers", accept: []string{"application/json;q=0.1", "text/event-stream"}, wantSSE: true, wantOK: true},
		{name: "anything", accept: []string{"*/*"}, wantOK: true},
		{name: "text wildcard", accept: []string{"text/*"}, wantSSE: true, wantOK: true},
		{name: "specific range wins over wildcard", accept: []string{"*/*;q=0.9, application/json;q=0"}, wantSSE: true, wantOK: true},
		{name: "neither", accept: []string{"image/png"}},
		{name: "both refused", accept: []string{"application/json;q=0, text/event-stream;q=0"}},
		{name: "bad quality refuses", accept: []string{"application/json;q=x"}},
		{name: "garbage", accept: []string{";;;"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sse, ok := preferSSE(tc.accept)
			if sse != tc.wantSSE || ok != tc.wantOK {
				t.Fatalf("preferSSE(%q) = %v, %v; want %v, %v", tc.accept, sse, ok, tc.wantSSE, tc.wantOK)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{name: "number", body: `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, want: "7"},
		{name: "string", body: `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`, want: `"a"`},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "null", body: `{"jsonrpc":"2.0","id":null}`},
		{name: "object id", body: `{"jsonrpc":"2.0","id":{"x":1}}`},
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(requestID([]byte(tc.body))); got != tc.want {
				t.Fatalf("requestID(%s) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

// TestResponseWriter: a limited call's answer becomes 429 with
// Retry-After, and the SDK's plain-text errors become JSON-RPC errors
// that name the request.
func TestResponseWriter(t *testing.T) {
	tests := []struct {
		name       string
		limited    time.Duration
		write      func(w http.ResponseWriter)
		wantStatus int
		wantRetry  string
		wantCode   int // of a rewritten error; 0 when the body passes as written
		wantBody   string
	}{
		{name: "an answer passes", write: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":3,"result":{}}`))
		}, wantStatus: 200, wantBody: `{"jsonrpc":"2.0","id":3,"result":{}}`},
		{name: "a limited answer is 429", limited: 1500 * time.Millisecond, write: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-31429,"message":"too many"}}`))
		}, wantStatus: 429, wantRetry: "2", wantBody: `{"jsonrpc":"2.0","id":3,"error":{"code":-31429,"message":"too many"}}`},
		{name: "a plain-text error", write: func(w http.ResponseWriter) {
			http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		}, wantStatus: 415, wantCode: -32600, wantBody: "Content-Type must be 'application/json'"},
		{name: "a malformed payload", write: func(w http.ResponseWriter) {
			http.Error(w, "malformed payload: bad", http.StatusBadRequest)
		}, wantStatus: 400, wantCode: -32600, wantBody: "malformed payload: bad"},
		{name: "a server error", write: func(w http.ResponseWriter) {
			http.Error(w, "failed connection", http.StatusInternalServerError)
		}, wantStatus: 500, wantCode: -32603, wantBody: "failed connection"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			st := &requestState{}
			if tc.limited > 0 {
				st.limit(tc.limited)
			}
			w := &responseWriter{ResponseWriter: rec, st: st, id: json.RawMessage("3")}
			tc.write(w)
			w.finish()
			if rec.Code != tc.wantStatus || rec.Header().Get("Retry-After") != tc.wantRetry {
				t.Fatalf("status %d, Retry-After %q; want %d, %q", rec.Code, rec.Header().Get("Retry-After"), tc.wantStatus, tc.wantRetry)
			}
			if rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", rec.Header().Get("Cache-Control"))
			}
			if tc.wantCode == 0 {
				if rec.Body.String() != tc.wantBody {
					t.Fatalf("body %s, want %s", rec.Body, tc.wantBody)
				}
				return
			}
			var e rpcError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if e.Error.Code != tc.wantCode || e.Error.Message != tc.wantBody || string(e.ID) != "3" ||
				!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Fatalf("error %+v (id %s, type %s)", e.Error, e.ID, rec.Header().Get("Content-Type"))
			}
		})
	}
}

// TestSDKError: each plain-text refusal of the SDK's HTTP transport gets
// the JSON-RPC code it means, the one stdio answers for the same message.
func TestSDKError(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		msg      string
		wantCode int
		wantMsg  string
	}{
		{"unknown method", 400, `JSON RPC not handled: "foo/bar" unsupported`, -32601, `method not found: "foo/bar"`},
		{"method not found", 400, `method not found: "x"`, -32601, `method not found: "x"`},
		{"unknown method, no name", 400, `JSON RPC not handled`, -32601, `method not found`},
		{"a notification with an id", 400, `invalid request: unexpected id for "notifications/initialized"`, -32600, `invalid request: unexpected id for "notifications/initialized"`},
		{"a call without an id", 400, `invalid request: missing id for "tools/list"`, -32600, `invalid request: missing id for "tools/list"`},
		{"no params", 400, `invalid request: missing required "params"`, -32600, `invalid request: missing required "params"`},
		{"invalid params", 400, `invalid params: bad`, -32602, `invalid params: bad`},
		{"a parse error", 400, `parse error: x`, -32700, `parse error: x`},
		{"a malformed payload", 400, `malformed payload: invalid message version tag "1.0"; expected "2.0"`, -32600, `malformed payload: invalid message version tag "1.0"; expected "2.0"`},
		{"an id of the wrong type", 400, `malformed payload: parse error: invalid ID type map[string]interface {}`, -32600, `malformed payload: parse error: invalid ID type map[string]interface {}`},
		{"a batch the version forbids", 400, `JSON-RPC batching is not supported in 2025-06-18 and later (request version: 2025-06-18)`, -32600, `JSON-RPC batching is not supported in 2025-06-18 and later (request version: 2025-06-18)`},
		{"a protocol version header", 400, `Bad Request: Unsupported protocol version (supported versions: 2025-06-18)`, -32600, `Bad Request: Unsupported protocol version (supported versions: 2025-06-18)`},
		{"Last-Event-ID on a POST", 400, `can't send Last-Event-ID for POST request`, -32600, `can't send Last-Event-ID for POST request`},
		{"a method other than POST", 405, `Method Not Allowed`, -32600, `Method Not Allowed`},
		{"a Content-Type", 415, `Content-Type must be 'application/json'`, -32600, `Content-Type must be 'application/json'`},
		{"a body too large", 413, `request body exceeds 10 bytes`, -32600, `request body exceeds 10 bytes`},
		{"a closing session", 404, `session is closing`, -32600, `session is closing`},
		{"a server error", 500, `failed connection`, -32603, `failed connection`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := sdkError(tc.status, tc.msg)
			if code != tc.wantCode || msg != tc.wantMsg {
				t.Fatalf("sdkError(%d, %q) = %d, %q; want %d, %q", tc.status, tc.msg, code, msg, tc.wantCode, tc.wantMsg)
			}
		})
	}
}
