package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/server"
)

// TestMCPStdio starts the built kfa mcp as a subprocess, as an MCP client
// does, and drives it with the official Go SDK client: first while a
// server runs (the calls go through its admin socket), then with no
// server (each call opens kfa.db read-only, and leaves it as it was).
func TestMCPStdio(t *testing.T) {
	t.Parallel() // seconds of waiting on processes and I/O: overlap it with the other slow tests
	bin := buildKFA(t)
	dir := filepath.Join(shortTempDir(t), "data")
	l := startServer(t, dir, func(c *server.Config) { c.SeedSamples = true })
	ctx := context.Background()
	adm := client.NewUnix(filepath.Join(dir, admin.SocketName))
	alice, err := adm.CreateAgent(ctx, "alice", []string{"read", "post"})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := adm.CreateAgent(ctx, "bob", []string{"read", "post"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.New(l.url, client.WithToken(alice.Token)).SendMessage(ctx, askReq("m-1", "", "Can kfa mcp read while the server runs?"))
	if err != nil || res.Task == nil {
		t.Fatalf("ask: %v", err)
	}
	var md struct {
		DiscussionID string `json:"discussionId"`
	}
	if err := json.Unmarshal(res.Task.Metadata, &md); err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(l.url, client.WithToken(bob.Token)).Reply(ctx, md.DiscussionID, "Yes: through the admin socket."); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DeleteRecord(ctx, "bbolt-timeout-open-locked"); err != nil {
		t.Fatal(err)
	}

	t.Run("through the server", func(t *testing.T) { checkStdio(t, bin, dir, alice, md.DiscussionID) })
	t.Run("bad lines through the server", func(t *testing.T) { checkStdioLines(t, bin, dir) })
	l.stop()
	sum := fileSum(t, filepath.Join(dir, "kfa.db"))
	t.Run("from the file", func(t *testing.T) { checkStdio(t, bin, dir, alice, md.DiscussionID) })
	t.Run("bad lines from the file", func(t *testing.T) { checkStdioLines(t, bin, dir) })
	if fileSum(t, filepath.Join(dir, "kfa.db")) != sum {
		t.Fatal("kfa mcp changed kfa.db")
	}

	// Between calls kfa mcp holds nothing: a server starts beside it, and
	// the next call goes through that server.
	cs := stdioSession(t, bin, dir, alice.Token)
	stdioOut[mcpserver.WhoamiOutput](t, cs, mcpserver.ToolWhoami, nil)
	l = startServer(t, dir, nil)
	if out := stdioOut[mcpserver.WhoamiOutput](t, cs, mcpserver.ToolWhoami, nil); out.AgentID != alice.ID {
		t.Fatalf("whoami: %+v", out)
	}
	resp, err := http.Get(l.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `kfa_mcp_calls_total{outcome="ok",tool="whoami"} 1`) {
		t.Fatal("the call after kfa serve started did not go through the server")
	}
}

// checkStdio runs every tool through a kfa mcp subprocess.
func checkStdio(t *testing.T, bin, dir string, alice api.Agent, disc string) {
	cs := stdioSession(t, bin, dir, alice.Token)
	if init := cs.InitializeResult(); init.ServerInfo.Name != "kfa" || !strings.Contains(init.Instructions, "search") {
		t.Fatalf("initialize: %+v", init)
	}
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		if tl.InputSchema == nil || tl.OutputSchema == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("tool %s: %+v", tl.Name, tl)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "fetch,get_changes,search,whoami" {
		t.Fatalf("tools: %v", names)
	}

	found := stdioOut[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "where is the agent card served, well-known path"})
	if len(found.Results) == 0 || found.Results[0].ID != "a2a-agent-card-well-known" || found.Results[0].URL == "" {
		t.Fatalf("search: %+v", found)
	}
	filtered := stdioOut[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "timeout", "product": "go", "limit": 5})
	for _, r := range filtered.Results {
		if r.Product != "go" {
			t.Errorf("product filter go returned %s (%s)", r.ID, r.Product)
		}
	}
	if miss := stdioOut[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "zyxwv qqqq flibbertigibbet"}); len(miss.Results) != 0 {
		t.Fatalf("miss: %+v", miss)
	}

	rec := stdioOut[mcpserver.FetchOutput](t, cs, mcpserver.ToolFetch, map[string]any{"id": "a2a-agent-card-well-known"})
	if rec.Metadata.Source != "record" || rec.Text == "" || rec.Title != found.Results[0].Title {
		t.Fatalf("fetch record: %+v", rec)
	}
	d := stdioOut[mcpserver.FetchOutput](t, cs, mcpserver.ToolFetch, map[string]any{"id": disc})
	if d.Metadata.Source != "discussion" || !strings.Contains(d.Text, "Can kfa mcp read while the server runs?") ||
		!strings.Contains(d.Text, "Yes: through the admin socket.") {
		t.Fatalf("fetch discussion: %+v", d)
	}
	if r := stdioCall(t, cs, mcpserver.ToolFetch, map[string]any{"id": "no-such-id"}); !r.IsError || !strings.Contains(text(r), `"no-such-id"`) {
		t.Fatalf("fetch unknown: %+v", r)
	}

	// The feed, in pages of 7, ends where kfa records list is.
	state := map[string]string{}
	for cursor, page := "", 0; ; page++ {
		out := stdioOut[mcpserver.ChangesOutput](t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": cursor, "limit": 7})
		if len(out.Changes) > 7 || page > 100 {
			t.Fatalf("page %d: %d changes", page, len(out.Changes))
		}
		for _, c := range out.Changes {
			state[c.ID] = c.Op
		}
		if cursor = out.NextCursor; !out.HasMore {
			break
		}
	}
	var existing []string
	for id, op := range state {
		if op == "upsert" {
			existing = append(existing, id)
		}
	}
	slices.Sort(existing)
	out, err := exec.Command(bin, "records", "list", "--limit", "0", "--json", "--data", dir).Output()
	if err != nil {
		t.Fatalf("records list: %v", err)
	}
	var recs []api.Record
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, r := range recs {
		listed = append(listed, r.ID)
	}
	if strings.Join(existing, ",") != strings.Join(listed, ",") || state["bbolt-timeout-open-locked"] != "delete" {
		t.Fatalf("the feed says %v\nkfa records list says %v", existing, listed)
	}

	if w := stdioOut[mcpserver.WhoamiOutput](t, cs, mcpserver.ToolWhoami, nil); !w.Authenticated || w.AgentID != alice.ID || w.Name != "alice" {
		t.Fatalf("whoami with KFA_TOKEN: %+v", w)
	}
	if w := stdioOut[mcpserver.WhoamiOutput](t, stdioSession(t, bin, dir, ""), mcpserver.ToolWhoami, nil); w.Authenticated {
		t.Fatalf("whoami without a token: %+v", w)
	}
	bad := stdioCall(t, stdioSession(t, bin, dir, "kfa_notatoken"), mcpserver.ToolWhoami, nil)
	if !bad.IsError || text(bad) != mcpserver.TokenRefused {
		t.Fatalf("whoami with a bad token: %+v %q", bad, text(bad))
	}
}

// checkStdioLines pipes lines to kfa mcp as a shell would: a line that is
// not JSON, or not a message kfa takes, gets an error answer and the rest
// are served; every request has its answer before kfa mcp exits 0, and
// none carries a field of a later protocol version.
func checkStdioLines(t *testing.T, bin, dir string) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"agent card well-known path","limit":1}}}`,
		`this line is not JSON`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"foo/bar"}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":9}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":{"Query":"x"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fetch","arguments":{"id":"a2a-agent-card-well-known"}}}`,
	}
	cmd := exec.Command(bin, "mcp", "--data", dir, "--public-url", "http://kfa.test")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kfa mcp: %v\n%s", err, out)
	}
	type errorBody struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	answers := map[string]errorBody{}
	var results []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var a struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *errorBody      `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		var e errorBody
		if a.Error != nil {
			e = *a.Error
		}
		answers[string(a.ID)] = e
		results = append(results, string(a.Result))
	}
	for id, want := range map[string]int{"1": 0, "2": 0, "null": -32700, "3": 0, "4": -32601, "5": 0, "6": -32602, "7": 0} {
		if got, ok := answers[id]; !ok || got.Code != want {
			t.Errorf("id %s: answered %v, error %+v; want code %d", id, ok, got, want)
		}
	}
	if len(answers) != 8 {
		t.Errorf("%d answers, want 8:\n%s", len(answers), out)
	}
	if joined := strings.Join(results, ""); strings.Contains(joined, `"ttlMs"`) || !strings.Contains(joined, "limit: must be an integer from 1 to 5") {
		t.Errorf("results:\n%s", out)
	}
}

// stdioSession starts kfa mcp with KFA_TOKEN set to token (when not
// empty) and connects to it.
func stdioSession(t *testing.T, bin, dir, token string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "--data", dir, "--public-url", "http://kfa.test")
	cmd.Env = append(os.Environ(), "KFA_TOKEN="+token)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "kfa-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start kfa mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func stdioCall(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// stdioOut calls a tool that must succeed and decodes its structured
// content, which its text content must repeat.
func stdioOut[T any](t *testing.T, cs *mcp.ClientSession, tool string, args any) T {
	t.Helper()
	res := stdioCall(t, cs, tool, args)
	var out, fromText T
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", tool, args, text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
		t.Fatalf("%s: text content %q: %v", tool, text(res), err)
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
