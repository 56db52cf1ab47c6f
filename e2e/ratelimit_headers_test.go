package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/server"
)

// rateHeaders is the RateLimit header fields of an answer, "" for none.
func rateHeaders(resp *http.Response) string {
	h := resp.Header
	if h.Get("RateLimit-Limit") == "" && h.Get("RateLimit-Remaining") == "" && h.Get("RateLimit-Reset") == "" && h.Get("RateLimit-Policy") == "" {
		return ""
	}
	return h.Get("RateLimit-Limit") + " " + h.Get("RateLimit-Remaining") + " " + h.Get("RateLimit-Reset") + " " + h.Get("RateLimit-Policy")
}

// TestRateLimitHeaders: every authenticated answer names the limit it
// counted against and what is left of it, on every binding and for each
// kind of limit; anonymous answers and refused credentials carry none.
func TestRateLimitHeaders(t *testing.T) {
	h := start(t, func(c *server.Config) {
		c.MCP = true
		c.RequestRate, c.AskRate, c.ReplyRate, c.SearchRate = 6, 2, 3, 4
		c.MaxOpenTasks = 0
	})
	alice, _ := h.agent("alice")
	bob, _ := h.agent("bob")
	hdr := func(tok string) map[string]string { return a2aHeaders(tok) }

	// The request rate: GetTask/ListTasks, whoami, JSON-RPC, MCP, and an
	// error answer (404) all count and say so.
	steps := []struct {
		name, method, path, body string
		headers                  map[string]string
		status                   int
		want                     string
	}{
		{"list", "GET", "/a2a/v1/tasks", "", hdr(alice.Token), 200, `6 5 10 6;w=60;name="request"`},
		{"missing task", "GET", "/a2a/v1/tasks/nope", "", hdr(alice.Token), 404, `6 4 20 6;w=60;name="request"`},
		{"whoami by key", "GET", "/api/v1/whoami", "", map[string]string{"X-API-Key": alice.Token}, 200, `6 3 30 6;w=60;name="request"`},
		{"json-rpc", "POST", "/a2a/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, hdr(alice.Token), 200, `6 2 40 6;w=60;name="request"`},
		{"bob has his own", "GET", "/a2a/v1/tasks", "", hdr(bob.Token), 200, `6 5 10 6;w=60;name="request"`},
		// Anonymous and refused: none.
		{"anonymous discussions", "GET", "/api/v1/discussions", "", nil, 200, ""},
		{"anonymous card", "GET", "/.well-known/agent-card.json", "", nil, 200, ""},
		{"bad token", "GET", "/a2a/v1/tasks", "", hdr("kfa_" + strings.Repeat("b", 52)), 401, ""},
		{"no token", "GET", "/a2a/v1/tasks", "", hdr(""), 401, ""},
	}
	for _, st := range steps {
		resp, body := h.raw(st.method, st.path, st.headers, st.body)
		if resp.StatusCode != st.status {
			t.Fatalf("%s: %d %s", st.name, resp.StatusCode, body)
		}
		if got := rateHeaders(resp); !sameRate(got, st.want) {
			t.Fatalf("%s: RateLimit %q, want %q", st.name, got, st.want)
		}
	}
	// MCP counts too.
	resp, body := h.mcpPost(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`,
		"Authorization", "Bearer "+alice.Token)
	if resp.StatusCode != 200 || !sameRate(rateHeaders(resp), `6 1 50 6;w=60;name="request"`) {
		t.Fatalf("mcp: %d %q %s", resp.StatusCode, rateHeaders(resp), body)
	}
	// An ask names the ask rate (it counts against the request rate too).
	resp, body = h.raw("POST", "/a2a/v1/message:send", hdr(alice.Token), mustJSON(askReq("r-1", "What do the RateLimit headers say?", nil)))
	if resp.StatusCode != 200 || !sameRate(rateHeaders(resp), `2 1 30 2;w=60;name="ask"`) {
		t.Fatalf("ask: %d %q %s", resp.StatusCode, rateHeaders(resp), body)
	}
	var sent struct {
		Task a2a.Task `json:"task"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	disc := discussionOf(t, sent.Task)
	// Spending the rest of alice's requests ends in a 429 with
	// Retry-After, whose headers say nothing is left.
	for i := 0; ; i++ {
		resp, body = h.raw("GET", "/a2a/v1/tasks", hdr(alice.Token), "")
		if resp.StatusCode == 429 {
			if resp.Header.Get("Retry-After") == "" || resp.Header.Get("RateLimit-Remaining") != "0" ||
				!strings.Contains(string(body), "too many requests") {
				t.Fatalf("over the request rate: %v %s", resp.Header, body)
			}
			break
		}
		if resp.StatusCode != 200 || i == 6 {
			t.Fatalf("request %d over the rate: %d %s", i, resp.StatusCode, body)
		}
	}
	// A reply names the reply rate; a search by an agent the search rate.
	resp, body = h.raw("POST", "/api/v1/discussions/"+disc+"/replies", hdr(bob.Token), `{"body":"They say what is left."}`)
	if resp.StatusCode != 201 || !sameRate(rateHeaders(resp), `3 2 20 3;w=60;name="reply"`) {
		t.Fatalf("reply: %d %q %s", resp.StatusCode, rateHeaders(resp), body)
	}
	resp, body = h.raw("POST", "/a2a/v1/message:send", hdr(bob.Token), mustJSON(dataReq("s-1", `{"action":"search","query":"agent card"}`, false)))
	if resp.StatusCode != 200 || !sameRate(rateHeaders(resp), `4 3 15 4;w=60;name="search"`) {
		t.Fatalf("search: %d %q %s", resp.StatusCode, rateHeaders(resp), body)
	}
	// An anonymous search counts against its address, and says nothing.
	resp, body = h.raw("POST", "/a2a/v1/message:send", hdr(""), mustJSON(dataReq("s-2", `{"action":"search","query":"agent card"}`, false)))
	if resp.StatusCode != 200 || rateHeaders(resp) != "" {
		t.Fatalf("anonymous search: %d %q %s", resp.StatusCode, rateHeaders(resp), body)
	}
}

// sameRate compares RateLimit headers "limit remaining reset policy"
// with what a request made at no time after the first would see. Time does
// pass (a slow machine, a long pause), which only ever gives back: the
// remaining count may be up to two higher, the reset lower.
func sameRate(got, want string) bool {
	if got == want {
		return true
	}
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != 4 || len(w) != 4 || g[0] != w[0] || g[3] != w[3] {
		return false
	}
	gr, err1 := strconv.Atoi(g[1])
	wr, err2 := strconv.Atoi(w[1])
	gs, err3 := strconv.Atoi(g[2])
	ws, err4 := strconv.Atoi(w[2])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return false
	}
	return gr >= wr && gr <= wr+2 && gs >= 0 && gs <= ws
}
