package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/service"
)

// TestMCPBadInput: every kind of bad call gets a clear JSON-RPC or tool
// error, and none writes anything.
func TestMCPBadInput(t *testing.T) {
	h := start(t, func(c *server.Config) {
		c.SeedSamples = true
		c.MCPAllowedOrigins = []string{"https://app.example.com"}
	})
	cs := mcpSession(t, h, "")
	before := h.digest()

	t.Run("tool errors", func(t *testing.T) {
		// Worded like the A2A errors, for the model that reads them.
		long := strings.Repeat("é", 1001)
		const searchTakes = "(search takes query, limit, kind, product, environment, minScore, minTrust, minReputation)"
		for _, tc := range []struct {
			name string
			tool string
			args any
			want string
		}{
			{"missing query", mcpserver.ToolSearch, map[string]any{}, "query: is required"},
			{"query of the wrong type", mcpserver.ToolSearch, map[string]any{"query": 42}, "query: must be a string of 1 to 1000 characters"},
			{"query null", mcpserver.ToolSearch, map[string]any{"query": nil}, "query: must be a string of 1 to 1000 characters"},
			{"blank query", mcpserver.ToolSearch, map[string]any{"query": "   "}, "query: must not be empty"},
			{"query too long", mcpserver.ToolSearch, map[string]any{"query": long}, "query: 1001 characters, at most 1000"},
			{"limit 0", mcpserver.ToolSearch, map[string]any{"query": "x", "limit": 0}, "limit: must be an integer from 1 to 5"},
			{"limit 9", mcpserver.ToolSearch, map[string]any{"query": "x", "limit": 9}, "limit: must be an integer from 1 to 5"},
			{"limit not an integer", mcpserver.ToolSearch, map[string]any{"query": "x", "limit": "3"}, "limit: must be an integer from 1 to 5"},
			{"limit null", mcpserver.ToolSearch, map[string]any{"query": "x", "limit": nil}, "limit: must be an integer from 1 to 5"},
			{"filter too long", mcpserver.ToolSearch, map[string]any{"query": "x", "kind": strings.Repeat("k", 65)}, "kind: 65 characters, at most 64"},
			{"control character in a filter", mcpserver.ToolSearch, map[string]any{"query": "x", "product": "a\u0007b"}, "product: contains the control character U+0007"},
			{"unknown argument", mcpserver.ToolSearch, map[string]any{"query": "x", "action": "ask"}, "action: unknown argument " + searchTakes},
			{"arguments not an object", mcpserver.ToolSearch, []string{"x"}, "arguments: must be a JSON object " + searchTakes},
			{"fetch without id", mcpserver.ToolFetch, map[string]any{}, "id: is required"},
			{"fetch id too long", mcpserver.ToolFetch, map[string]any{"id": strings.Repeat("a", 129)}, "id: 129 characters, at most 128"},
			{"bad cursor", mcpserver.ToolGetChanges, map[string]any{"cursor": "%%%"}, `"%%%"`},
			{"cursor too long", mcpserver.ToolGetChanges, map[string]any{"cursor": strings.Repeat("A", 65)}, "cursor: 65 characters, at most 64"},
			{"changes limit 0", mcpserver.ToolGetChanges, map[string]any{"limit": 0}, "limit: must be an integer from 1 to 500"},
			{"whoami takes nothing", mcpserver.ToolWhoami, map[string]any{"token": "kfa_x"}, "token: unknown argument (whoami takes none)"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mcpToolError(t, mcpCall(t, cs, tc.tool, tc.args), tc.want)
			})
		}
	})

	t.Run("ambiguous arguments", func(t *testing.T) {
		// A key two readers could take for different fields is invalid
		// params, naming the key.
		for _, tc := range []struct {
			name string
			tool string
			args string
			want string
		}{
			{"another case", mcpserver.ToolSearch, `{"Query":"x"}`, `"Query" is not an argument of search`},
			{"Unicode folding", mcpserver.ToolGetChanges, `{"cur\u017for":"x"}`, `"cur\u017for" is not an argument of get_changes`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, tc.want) {
					t.Fatalf("%s: %v", tc.args, err)
				}
			})
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, `"ask"`) {
			t.Fatalf("unknown tool: %v", err)
		}
	})

	t.Run("transport errors", func(t *testing.T) {
		call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
		for _, tc := range []struct {
			name   string
			body   string
			extra  []string
			status int
			code   int
			want   string
			id     string // of the answer: the request's when it could be read
		}{
			{"not JSON", `{"jsonrpc":`, nil, 400, -32700, "not valid JSON", "null"},
			{"duplicate keys", `{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/list"}`, nil, 400, -32600, "duplicate key", "null"},
			{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"\xff\"}", nil, 400, -32700, "UTF-8", "null"},
			{"body too large", `{"pad":"` + strings.Repeat("x", int(h.cfg.MaxBodyBytes)) + `"}`, nil, 413, -32600, "larger than", "null"},
			{"wrong content type", call, []string{"Content-Type", "text/plain"}, 415, -32600, "Content-Type", "5"},
			{"accepts neither answer", call, []string{"Accept", "image/png"}, 406, -32600, "Accept", "5"},
			{"foreign origin", call, []string{"Origin", "https://evil.example"}, 403, -32600, "https://evil.example", "null"},
			{"an allowed origin's subdomain", call, []string{"Origin", "https://x.app.example.com"}, 403, -32600, "Origin", "null"},
			{"not a JSON-RPC request", `{"hello":"world"}`, nil, 400, -32600, `jsonrpc must be "2.0"`, "null"},
			{"neither a request nor a response", `{"jsonrpc":"2.0"}`, nil, 400, -32600, "needs a method", "null"},
			{"another JSON-RPC version", `{"jsonrpc":"1.0","id":5,"method":"tools/list"}`, nil, 400, -32600, `jsonrpc must be "2.0"`, "5"},
			{"an id of the wrong type", `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, nil, 400, -32600, "id must be", "null"},
			{"a method that is not a string", `{"jsonrpc":"2.0","id":5,"method":5}`, nil, 400, -32600, "method must be a string", "5"},
			{"a case variant of a member", `{"jsonrpc":"2.0","id":5,"Method":"tools/list"}`, nil, 400, -32600, `"Method"`, "5"},
			{"an empty batch", `[]`, nil, 400, -32600, "at least one", "null"},
			{"a duplicate argument", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{"query":"a","query":"b"}}}`,
				nil, 400, -32602, `params.arguments: duplicate key "query"`, "5"},
			{"two spellings of an argument", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{"query":"a","QUERY":"b"}}}`,
				nil, 400, -32602, `params.arguments: duplicate key "QUERY": it differs from "query" only in case`, "5"},
			{"a case variant of a parameter", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"whoami","ARGUMENTS":{}}}`,
				nil, 400, -32602, `"ARGUMENTS"`, "5"},
			// What the SDK refuses in plain text gets the code it means.
			{"an unknown method", `{"jsonrpc":"2.0","id":5,"method":"foo/bar"}`, nil, 400, -32601, `method not found: "foo/bar"`, "5"},
			{"an unknown notification", `{"jsonrpc":"2.0","method":"foo/bar"}`, nil, 400, -32601, `method not found: "foo/bar"`, "null"},
			{"a notification with an id", `{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}`, nil, 400, -32600, "unexpected id", "5"},
			{"a call without an id", `{"jsonrpc":"2.0","method":"tools/list"}`, nil, 400, -32600, "missing id", "null"},
			{"a call without params", `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`, nil, 400, -32600, `missing required "params"`, "5"},
			{"a batch the protocol version forbids", `[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]`, []string{"MCP-Protocol-Version", "2025-06-18"}, 400, -32600, "batching is not supported", "null"},
			{"an unknown protocol version", call, []string{"MCP-Protocol-Version", "1999-01-01"}, 400, -32600, "protocol version", "5"},
			{"Last-Event-ID on a POST", call, []string{"Last-Event-ID", "1"}, 400, -32600, "Last-Event-ID", "5"},
			// The SDK answers these itself, as JSON-RPC errors.
			{"params of the wrong shape", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}`, nil, 200, -32602, "invalid params", "5"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, body := h.mcpPost(tc.body, tc.extra...)
				e := decodeRPCErr(t, body)
				if resp.StatusCode != tc.status || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.want) {
					t.Fatalf("%d %s", resp.StatusCode, body)
				}
				if string(e.ID) != tc.id {
					t.Fatalf("the answer's id is %s, want %s: %s", e.ID, tc.id, body)
				}
			})
		}
		for _, method := range []string{"GET", "DELETE", "PUT"} {
			resp, body := h.raw(method, "/mcp", nil, "")
			if e := decodeRPCErr(t, body); resp.StatusCode != http.StatusMethodNotAllowed || e.Error.Code != -32600 {
				t.Fatalf("%s /mcp: %d %s", method, resp.StatusCode, body)
			}
		}
		resp, body := h.raw("GET", "/mcp", nil, "")
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Fatalf("GET /mcp: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("origins", func(t *testing.T) {
		call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
		for _, origin := range []string{"https://app.example.com", "HTTPS://APP.EXAMPLE.COM", ""} {
			resp, body := h.mcpPost(call, "Origin", origin)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `\"authenticated\":false`) {
				t.Fatalf("Origin %q: %d %s", origin, resp.StatusCode, body)
			}
		}
	})

	if after := h.digest(); after != before {
		t.Fatal("a refused MCP call changed the store")
	}
}

// TestMCPLimits: MCP searches and A2A searches share the per-address
// budget, and a refused one is HTTP 429 with Retry-After; failed bearer
// tokens cost the address like anywhere else.
func TestMCPLimits(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SeedSamples = true; c.SearchRate = 3; c.AuthFailRate = 2 })
	search := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"agent card"}}}`
	for i := range 2 {
		if resp, body := h.mcpPost(search); resp.StatusCode != http.StatusOK {
			t.Fatalf("search %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if ids := a2aSearchIDs(t, h, map[string]any{"query": "agent card"}); len(ids) == 0 {
		t.Fatal("the A2A search found nothing")
	}
	for _, accept := range []string{"application/json", "text/event-stream"} {
		resp, body := h.mcpPost(search, "Accept", accept)
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusTooManyRequests || err != nil || secs < 1 || !strings.Contains(string(body), `"code":-31429`) {
			t.Fatalf("4th search (%s): %d Retry-After %q %s", accept, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	// The A2A search is refused too: one budget.
	b := `{"message":{"messageId":"m-9","role":"ROLE_USER","parts":[{"text":"agent card"}]}}`
	if resp, body := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(""), b); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("A2A search after MCP ones: %d %s", resp.StatusCode, body)
	}
	// Other tools are not searches.
	if resp, body := h.mcpPost(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_changes","arguments":{"limit":1}}}`); resp.StatusCode != 200 {
		t.Fatalf("get_changes while searches are limited: %d %s", resp.StatusCode, body)
	}
	// Failed bearer tokens: two 401s, then the address is refused.
	whoami := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	for i, want := range []int{401, 401, 429} {
		resp, body := h.mcpPost(whoami, "Authorization", "Bearer kfa_guess"+strconv.Itoa(i))
		if resp.StatusCode != want {
			t.Fatalf("bad token %d: %d %s", i, resp.StatusCode, body)
		}
	}

	text := scrape(t, h.url+"/metrics")
	for _, want := range []string{
		`kfa_mcp_calls_total{outcome="ok",tool="search"} 2`,
		`kfa_mcp_calls_total{outcome="rate_limited",tool="search"} 2`,
		`kfa_mcp_calls_total{outcome="ok",tool="get_changes"} 1`,
		`kfa_mcp_calls_total{outcome="ok",tool="fetch"} 0`,
		`kfa_http_requests_total{code="429",method="POST",route="/mcp"} 3`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestMCPOff: --mcp=false serves no /mcp and the card names no endpoint;
// on, the card names it.
func TestMCPOff(t *testing.T) {
	on := start(t, nil)
	card, _, err := on.anon.Card(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ext := card.Capabilities.Extensions
	if len(ext) != 1 || ext[0].URI != service.MCPExtensionURI || ext[0].Required || ext[0].Params["endpoint"] != "http://kfa.test/mcp" {
		t.Fatalf("card extensions: %+v", ext)
	}
	off := start(t, func(c *server.Config) { c.MCP = false })
	resp, body := off.mcpPost(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/mcp with --mcp=false: %d %s", resp.StatusCode, body)
	}
	card, _, err = off.anon.Card(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Capabilities.Extensions) != 0 {
		t.Fatalf("card extensions with --mcp=false: %+v", card.Capabilities.Extensions)
	}
}
