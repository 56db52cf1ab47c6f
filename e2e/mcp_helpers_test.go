package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kfa-project/kfa/mcpserver"
)

// mcpConnect opens an MCP session to the server's /mcp with the official
// Go SDK client, sending token when it is not empty.
func mcpConnect(t *testing.T, h *harness, token string) (*mcp.ClientSession, error) {
	t.Helper()
	hc := http.DefaultClient
	if token != "" {
		hc = &http.Client{Transport: bearerTransport{token: token}}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "kfa-e2e", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
}

func mcpSession(t *testing.T, h *harness, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpConnect(t, h, token)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// mcpCall calls a tool and returns its result; a protocol error fails the
// test.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// mcpOut decodes a successful result's structured content into out, and
// checks that its text content is the same JSON (the search/fetch
// connector convention).
func mcpOut(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", mcpText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	var fromText, fromStruct any
	if err := json.Unmarshal([]byte(mcpText(res)), &fromText); err != nil {
		t.Fatalf("text content is not JSON: %v\n%s", err, mcpText(res))
	}
	if err := json.Unmarshal(b, &fromStruct); err != nil {
		t.Fatal(err)
	}
	if mustJSON(fromText) != mustJSON(fromStruct) {
		t.Fatalf("text content %s differs from structured content %s", mcpText(res), b)
	}
}

// mcpText is the text of a result's single text content.
func mcpText(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return ""
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return ""
	}
	return tc.Text
}

// mcpToolError checks that res is a tool error whose text holds want.
func mcpToolError(t *testing.T, res *mcp.CallToolResult, want string) {
	t.Helper()
	if !res.IsError || !strings.Contains(mcpText(res), want) {
		t.Fatalf("want a tool error mentioning %q, got isError=%v %q", want, res.IsError, mcpText(res))
	}
}

func mcpSearch(t *testing.T, cs *mcp.ClientSession, args map[string]any) []mcpserver.SearchResult {
	t.Helper()
	var out mcpserver.SearchOutput
	mcpOut(t, mcpCall(t, cs, mcpserver.ToolSearch, args), &out)
	if out.Results == nil {
		t.Fatal("search answered results: null, want a list")
	}
	return out.Results
}

func resultIDs(rs []mcpserver.SearchResult) []string {
	ids := []string{}
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

// mcpPost sends one raw JSON-RPC body to /mcp with the headers an MCP
// client sends, plus extra (name, value; an empty value removes one).
func (h *harness) mcpPost(body string, extra ...string) (*http.Response, []byte) {
	h.t.Helper()
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(hdr, extra[i])
		} else {
			hdr[extra[i]] = extra[i+1]
		}
	}
	return h.raw("POST", "/mcp", hdr, body)
}

// rpcErr is the error of a JSON-RPC answer.
type rpcErr struct {
	ID    json.RawMessage `json:"id"`
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeRPCErr(t *testing.T, body []byte) rpcErr {
	t.Helper()
	var e rpcErr
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == 0 {
		t.Fatalf("not a JSON-RPC error: %s", body)
	}
	return e
}
