package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/server"
)

// TestAPIKeyHeader checks that X-API-Key is accepted wherever a bearer is
// (HTTP+JSON, JSON-RPC, /api/v1, MCP), that both headers with different
// tokens are a 400, and that the card declares the scheme.
func TestAPIKeyHeader(t *testing.T) {
	h := start(t, func(c *server.Config) { c.MCP = true })
	alice, _ := h.agent("alice")
	bob, _ := h.agent("bob")
	key := func(tok string) map[string]string {
		return a2aHeaders("", "X-API-Key", tok)
	}

	// HTTP+JSON: an ask and a read with the key only.
	resp, body := h.raw("POST", "/a2a/v1/message:send", key(alice.Token), mustJSON(askReq("k-1", "Does X-API-Key work for asks?", nil)))
	if resp.StatusCode != 200 {
		t.Fatalf("ask with X-API-Key: %d %s", resp.StatusCode, body)
	}
	var sent struct {
		Task struct{ ID string } `json:"task"`
	}
	if err := json.Unmarshal(body, &sent); err != nil || sent.Task.ID == "" {
		t.Fatalf("ask answer: %s", body)
	}
	if resp, body = h.raw("GET", "/a2a/v1/tasks/"+sent.Task.ID, key(alice.Token), ""); resp.StatusCode != 200 {
		t.Fatalf("get with X-API-Key: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(resp.Header.Get("Vary"), "X-API-Key") {
		t.Fatalf("Vary %q does not name X-API-Key", resp.Header.Get("Vary"))
	}
	// Ownership follows the token, whichever header carries it.
	if resp, body = h.raw("GET", "/a2a/v1/tasks/"+sent.Task.ID, key(bob.Token), ""); resp.StatusCode != 404 {
		t.Fatalf("bob's key read alice's task: %d %s", resp.StatusCode, body)
	}
	// kfa's own API.
	resp, body = h.raw("GET", "/api/v1/whoami", map[string]string{"X-API-Key": alice.Token}, "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"alice"`) {
		t.Fatalf("whoami with X-API-Key: %d %s", resp.StatusCode, body)
	}
	// JSON-RPC.
	rpc := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + sent.Task.ID + `"}}`
	resp, body = h.raw("POST", "/a2a/jsonrpc", key(alice.Token), rpc)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"result"`) {
		t.Fatalf("JSON-RPC with X-API-Key: %d %s", resp.StatusCode, body)
	}
	// MCP whoami.
	resp, body = h.mcpPost(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, "X-API-Key", alice.Token)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `alice`) {
		t.Fatalf("MCP whoami with X-API-Key: %d %s", resp.StatusCode, body)
	}

	// The same token in both headers is fine; two different ones are a
	// 400 naming the rule, on every binding, and change nothing.
	both := a2aHeaders(alice.Token, "X-API-Key", alice.Token)
	if resp, body = h.raw("GET", "/a2a/v1/tasks/"+sent.Task.ID, both, ""); resp.StatusCode != 200 {
		t.Fatalf("same token in both headers: %d %s", resp.StatusCode, body)
	}
	before := h.digest()
	conflict := a2aHeaders(alice.Token, "X-API-Key", bob.Token)
	resp, body = h.raw("POST", "/a2a/v1/message:send", conflict, mustJSON(askReq("k-2", "Which token wins?", nil)))
	if resp.StatusCode != 400 || reason(body) != "INVALID_REQUEST" || !strings.Contains(string(body), "send one of the two") ||
		resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("conflicting headers: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = h.raw("POST", "/a2a/jsonrpc", conflict, rpc)
	if e := decodeRPCErr(t, body); e.Error.Code != -32600 || !strings.Contains(e.Error.Message, "send one of the two") {
		t.Fatalf("JSON-RPC conflicting headers: %d %s", resp.StatusCode, body)
	}
	if after := h.digest(); after != before {
		t.Fatal("a refused request changed the store")
	}
	// A bad key is a 401 with the Bearer challenge, like a bad bearer.
	resp, body = h.raw("GET", "/a2a/v1/tasks", key("kfa_"+strings.Repeat("a", 52)), "")
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Fatalf("bad key: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	// The card declares the key scheme next to the bearer.
	_, body = h.raw("GET", "/.well-known/agent-card.json", nil, "")
	var card struct {
		SecuritySchemes map[string]map[string]map[string]string `json:"securitySchemes"`
	}
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	if k := card.SecuritySchemes["apiKey"]["apiKeySecurityScheme"]; k["location"] != "header" || k["name"] != "X-API-Key" {
		t.Fatalf("apiKey scheme: %v", card.SecuritySchemes)
	}
}

// TestEmptyCredential: a credential header sent without a token is a 401
// that says the token is empty, on every surface that takes one, for
// both headers (the server trims "Bearer " to "Bearer": an empty token,
// not another scheme).
func TestEmptyCredential(t *testing.T) {
	h := start(t, func(c *server.Config) { c.MCP = true })
	for _, hd := range []struct {
		name, value, want string
	}{
		{"Authorization", "Bearer ", "bearer token is empty"},
		{"Authorization", "bearer", "bearer token is empty"},
		{"X-API-Key", " ", "X-API-Key header's token is empty"},
	} {
		for _, route := range []struct{ method, path, body string }{
			{"GET", "/a2a/v1/tasks", ""},
			{"GET", "/api/v1/whoami", ""},
			{"POST", "/a2a/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`},
		} {
			res, body := h.raw(route.method, route.path, a2aHeaders("", hd.name, hd.value), route.body)
			if !strings.Contains(string(body), hd.want) || strings.Contains(string(body), "scheme") {
				t.Errorf("%s: %q on %s: %d %s", hd.name, hd.value, route.path, res.StatusCode, body)
			}
		}
		res, body := h.mcpPost(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, hd.name, hd.value)
		if res.StatusCode != 401 || !strings.Contains(string(body)+res.Header.Get("WWW-Authenticate"), hd.want) {
			t.Errorf("%s: %q on MCP: %d %s %s", hd.name, hd.value, res.StatusCode, res.Header.Get("WWW-Authenticate"), body)
		}
	}
}
