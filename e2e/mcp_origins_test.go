package e2e

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/server"
)

// TestMCPOrigins: with --mcp-allowed-origins empty, a browser may call
// /mcp from kfa's own origins (the public URL's, and the loopback ones of
// the listening port, since the test server listens on 127.0.0.1) and
// from no other; a list replaces that default.
func TestMCPOrigins(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	check := func(t *testing.T, h *harness, origin string, want int) {
		t.Helper()
		resp, body := h.mcpPost(call, "Origin", origin)
		if resp.StatusCode != want {
			t.Fatalf("Origin %q: %d %s, want %d", origin, resp.StatusCode, body, want)
		}
		if want == http.StatusForbidden {
			if e := decodeRPCErr(t, body); e.Error.Code != -32600 || !strings.Contains(e.Error.Message, origin) {
				t.Fatalf("Origin %q: %s", origin, body)
			}
		}
	}

	h := start(t, nil)
	_, port, err := net.SplitHostPort(h.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"http://kfa.test", http.StatusOK},
		{"http://KFA.test:80", http.StatusOK},
		{"http://127.0.0.1:" + port, http.StatusOK},
		{"http://localhost:" + port, http.StatusOK},
		{"http://[::1]:" + port, http.StatusOK},
		{"https://kfa.test", http.StatusForbidden},
		{"http://evil.example", http.StatusForbidden},
		{"http://evil.example:" + port, http.StatusForbidden},
		{"http://localhost:1", http.StatusForbidden},
		{"null", http.StatusForbidden},
	} {
		t.Run("default "+tc.origin, func(t *testing.T) { check(t, h, tc.origin, tc.want) })
	}

	listed := start(t, func(c *server.Config) { c.MCPAllowedOrigins = []string{"https://app.example.com"} })
	_, port, err = net.SplitHostPort(listed.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"https://app.example.com", http.StatusOK},
		{"http://kfa.test", http.StatusForbidden},
		{"http://localhost:" + port, http.StatusForbidden},
	} {
		t.Run("listed "+tc.origin, func(t *testing.T) { check(t, listed, tc.origin, tc.want) })
	}
}
