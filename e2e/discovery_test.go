package e2e

import (
	"context"
	"testing"

	"github.com/kfa-project/kfa/server"
)

// TestInfo checks the connectivity check: anonymous, no version header,
// the same endpoints as the card, and no store read per request.
func TestInfo(t *testing.T) {
	h := start(t, func(c *server.Config) { c.MCP = true })
	ctx := context.Background()
	card, _, err := h.anon.Card(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in, err := h.anon.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "kfa" || in.Version != card.Version || in.AgentCard != "http://kfa.test/.well-known/agent-card.json" ||
		in.MCP != "http://kfa.test/mcp" || in.JWKS != "http://kfa.test/.well-known/jwks.json" ||
		in.AgentCard03 != "http://kfa.test/a2a/jsonrpc/agent-card.json" || mustJSON(in.ProtocolVersions) != `["1.0","0.3"]` {
		t.Fatalf("info: %+v", in)
	}
	if len(in.Interfaces) != len(card.SupportedInterfaces) {
		t.Fatalf("interfaces %+v, card %+v", in.Interfaces, card.SupportedInterfaces)
	}
	for i, ci := range card.SupportedInterfaces {
		if got := in.Interfaces[i]; got.URL != ci.URL || got.ProtocolBinding != ci.ProtocolBinding || got.ProtocolVersion != ci.ProtocolVersion {
			t.Fatalf("interface %d: %+v, card has %+v", i, got, ci)
		}
	}
	// A bad credential and a wrong version header change nothing.
	resp, _ := h.raw("GET", "/a2a/info", map[string]string{"Authorization": "Bearer junk", "A2A-Version": "9.9"}, "")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("info with junk headers: %d %v", resp.StatusCode, resp.Header)
	}
	// No store read: background loops may read now and then, but far
	// fewer times than the requests made. (Counted by bbolt's statistics;
	// on PostgreSQL there is no bbolt file to count.)
	if onPostgres() {
		return
	}
	const n = 50
	before := h.srv.Core().DB.BoltStats().ReadTx
	for range n {
		if _, err := h.anon.Info(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if reads := h.srv.Core().DB.BoltStats().ReadTx - before; reads >= n {
		t.Fatalf("%d info requests took %d read transactions", n, reads)
	}
}
