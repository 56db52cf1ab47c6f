package e2e

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	sdk03 "github.com/a2aproject/a2a-go/a2a"
	client03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/kfa-project/kfa/server"
)

var guideURL = regexp.MustCompile(`http://kfa\.test[^\s)` + "`" + `'"]*`)

// TestDiscoveryGuides: /llms.txt and /agents.md are made from what runs:
// every enabled skill with its summary, the limits as configured, and
// links that all answer on the live server (none is a 404).
func TestDiscoveryGuides(t *testing.T) {
	h := start(t, func(c *server.Config) { c.MCP = true; c.AskRate = 7; c.MaxReplies = 33 })
	card, _, err := h.anon.Card(bg())
	if err != nil {
		t.Fatal(err)
	}
	for path, ctype := range map[string]string{"/llms.txt": "text/plain; charset=utf-8", "/agents.md": "text/markdown; charset=utf-8"} {
		resp, body := h.raw("GET", path, nil, "")
		text := string(body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ctype || !strings.HasPrefix(text, "# kfa") {
			t.Fatalf("%s: %d %s\n%s", path, resp.StatusCode, resp.Header.Get("Content-Type"), text)
		}
		for _, s := range card.Skills {
			if !strings.Contains(text, "### "+s.ID+"\n") {
				t.Fatalf("%s does not list skill %s", path, s.ID)
			}
		}
		for _, want := range []string{"Asks: 7 per minute per agent.", "Replies on one discussion: at most 33.",
			"Requests: 1200 per minute per agent.", "X-API-Key", "## Ask", "http://kfa.test/mcp"} {
			if !strings.Contains(text, want) {
				t.Fatalf("%s does not say %q:\n%s", path, want, text)
			}
		}
		links := guideURL.FindAllString(text, -1)
		if len(links) < 10 {
			t.Fatalf("%s has only %d links: %v", path, len(links), links)
		}
		bases := map[string]bool{}
		for _, i := range card.SupportedInterfaces {
			bases[i.URL] = true
		}
		for _, u := range links {
			u = strings.TrimRight(u, ".,;:")
			if bases[u] {
				continue // an interface's base URL, not a route of its own
			}
			p := strings.TrimPrefix(u, "http://kfa.test")
			p = strings.ReplaceAll(p, "{id}", "01JD0000000000000000000000")
			resp, _ := h.raw("GET", p, nil, "")
			if resp.StatusCode == http.StatusNotFound && !strings.Contains(p, "/tasks/") {
				t.Errorf("%s links %s, which is a 404", path, u)
			}
		}
	}
}

// TestDiscoveryGuidesFollowConfig: a server without asks says nothing of
// asking.
func TestDiscoveryGuidesFollowConfig(t *testing.T) {
	h := start(t, func(c *server.Config) { c.ContributorWrites = false })
	_, body := h.raw("GET", "/llms.txt", nil, "")
	text := string(body)
	if strings.Contains(text, "ask-network") || strings.Contains(text, "## Ask") || strings.Contains(text, "Asks:") ||
		!strings.Contains(text, "### knowledge-search") {
		t.Fatalf("llms.txt without asks:\n%s", text)
	}
}

// TestCard03: a 0.3 client that discovers (the official SDK v0.3.15's
// resolver) reads the 0.3 card, and a client made from it talks to kfa.
func TestCard03(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	card, err := agentcard03.DefaultResolver.Resolve(ctx, h.url, agentcard03.WithPath("/a2a/jsonrpc/agent-card.json"))
	if err != nil {
		t.Fatalf("the 0.3 SDK cannot read the 0.3 card: %v", err)
	}
	if card.ProtocolVersion != "0.3.0" || card.URL != "http://kfa.test/a2a/jsonrpc" || card.PreferredTransport != sdk03.TransportProtocolJSONRPC ||
		!card.SupportsAuthenticatedExtendedCard || len(card.Skills) != 3 || card.SecuritySchemes["bearer"] == nil || card.SecuritySchemes["apiKey"] == nil {
		t.Fatalf("0.3 card: %+v", card)
	}
	if k, ok := card.SecuritySchemes["apiKey"].(sdk03.APIKeySecurityScheme); !ok || k.Name != "X-API-Key" || k.In != sdk03.APIKeySecuritySchemeInHeader {
		t.Fatalf("0.3 apiKey scheme: %#v", card.SecuritySchemes["apiKey"])
	}
	card.URL = h.url + "/a2a/jsonrpc"
	card.AdditionalInterfaces = nil
	c, err := client03.NewFromCard(ctx, card, client03.WithJSONRPCTransport(http.DefaultClient))
	if err != nil {
		t.Fatalf("0.3 client from the 0.3 card: %v", err)
	}
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &sdk03.MessageSendParams{Message: sdk03.NewMessage(sdk03.MessageRoleUser,
		sdk03.DataPart{Data: map[string]any{"action": "search", "query": "agent card"}})})
	if err != nil {
		t.Fatalf("0.3 search: %v", err)
	}
	if _, ok := res.(*sdk03.Message); !ok {
		t.Fatalf("0.3 search answered %T", res)
	}
	// Cacheable and anonymous, like the 1.0 card.
	resp, _ := h.raw("GET", "/a2a/jsonrpc/agent-card.json", nil, "")
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "public") {
		t.Fatalf("0.3 card headers: %v", resp.Header)
	}
}
