package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// mcpMessage is the one JSON-RPC message of an answer, JSON or an event
// stream.
func mcpMessage(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	if i := bytes.Index(body, []byte("data: {")); i >= 0 {
		body = body[i+len("data: "):]
		body = body[:bytes.IndexByte(body, '\n')]
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	return m
}

// TestMCPProtocolVersions: a client that negotiated a version before
// 2026-07-28 gets no field of that version (ttlMs, cacheScope,
// resultType), over JSON and over SSE; a 2026-07-28 request gets them; an
// SDK error never reaches a client with code 0.
func TestMCPProtocolVersions(t *testing.T) {
	h := start(t, nil)
	newer := []string{`"ttlMs"`, `"cacheScope"`, `"resultType"`}
	for _, version := range []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		for _, accept := range []string{"application/json", "text/event-stream"} {
			for _, method := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
				t.Run(version+" "+accept+" "+method, func(t *testing.T) {
					resp, body := h.mcpPost(`{"jsonrpc":"2.0","id":3,"method":"`+method+`"}`, "MCP-Protocol-Version", version, "Accept", accept)
					if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), accept) {
						t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
					}
					m := mcpMessage(t, body)
					for _, f := range newer {
						if bytes.Contains(m["result"], []byte(f)) {
							t.Fatalf("a %q client got %s: %s", version, f, body)
						}
					}
					if method == "tools/list" && !bytes.Contains(m["result"], []byte(`"name":"search"`)) {
						t.Fatalf("no tools: %s", body)
					}
					if string(m["id"]) != "3" || string(m["jsonrpc"]) != `"2.0"` {
						t.Fatalf("envelope: %s", body)
					}
				})
			}
		}
	}

	t.Run("2026-07-28", func(t *testing.T) {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
		resp, body := h.mcpPost(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{`+meta+`}}`,
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list")
		m := mcpMessage(t, body)
		if resp.StatusCode != 200 || !bytes.Contains(m["result"], []byte(`"ttlMs"`)) || !bytes.Contains(m["result"], []byte(`"cacheScope"`)) {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})

	t.Run("no code 0", func(t *testing.T) {
		resp, body := h.mcpPost(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":5}}`)
		e := decodeRPCErr(t, body)
		if resp.StatusCode != 200 || e.Error.Code != -32602 || string(e.ID) != "5" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
}
