package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/server"
)

// TestMisspeltQuery: a query whose only word is misspelt ("cerbot") is
// answered as the corrected query, and both bindings say so: the A2A
// answer's text and its data part's correctedQuery, and the MCP search
// result's correctedQuery. Nonsense stays a miss with no correctedQuery.
func TestMisspeltQuery(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SeedSamples = true; c.SearchRate = 0 })
	cs := mcpSession(t, h, "")
	for _, tc := range []struct{ query, corrected, top string }{
		{"cerbot", "certbot", "tls-certificate-expired"},
		{"renew cerbot", "renew certbot", "tls-certificate-expired"},
		{"zxqvj", "", ""},
	} {
		t.Run(tc.query, func(t *testing.T) {
			b, _ := json.Marshal(map[string]any{"action": "search", "query": tc.query})
			res, err := h.anon.SendMessage(bg(), dataMessage(b))
			if err != nil || res.Message == nil || len(res.Message.Parts) != 2 {
				t.Fatalf("A2A search: %v %+v", err, res)
			}
			text := ""
			if p := res.Message.Parts[0].Text; p != nil {
				text = *p
			}
			var data struct {
				Results []struct {
					ID string `json:"id"`
				} `json:"results"`
				CorrectedQuery *string `json:"correctedQuery"`
			}
			if err := json.Unmarshal(res.Message.Parts[1].Data, &data); err != nil {
				t.Fatal(err)
			}
			if tc.corrected == "" {
				if len(data.Results) > 0 || data.CorrectedQuery != nil || !strings.HasPrefix(text, "No knowledge records") {
					t.Errorf("A2A: %s\n%s", text, res.Message.Parts[1].Data)
				}
			} else {
				if len(data.Results) == 0 || data.Results[0].ID != tc.top || data.CorrectedQuery == nil || *data.CorrectedQuery != tc.corrected {
					t.Errorf("A2A data: %s", res.Message.Parts[1].Data)
				}
				if !strings.Contains(text, `Nothing matched "cerbot" as typed; searched "certbot".`) {
					t.Errorf("A2A text does not say the query was corrected: %s", text)
				}
			}

			var out mcpserver.SearchOutput
			mcpOut(t, mcpCall(t, cs, mcpserver.ToolSearch, map[string]any{"query": tc.query}), &out)
			if out.CorrectedQuery != tc.corrected || tc.top != "" && (len(out.Results) == 0 || out.Results[0].ID != tc.top) ||
				tc.top == "" && len(out.Results) > 0 {
				t.Errorf("MCP: %+v", out)
			}
		})
	}
}
