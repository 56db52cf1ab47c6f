package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/server"
)

// start runs a server on 127.0.0.1:0 over a temp data directory with the
// sample records.
func start(t *testing.T, edit func(*server.Config)) *server.Server {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.AdminSocket = filepath.Join(cfg.DataDir, "kfa.sock")
	cfg.SeedSamples = true
	cfg.SearchRate = 0
	if edit != nil {
		edit(&cfg)
	}
	s, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

// send posts a raw SendMessage body and returns the status and the
// decoded JSON answer.
func send(t *testing.T, base, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/a2a/v1/message:send", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, b)
	}
	return resp.StatusCode, out
}

func searchBody(data map[string]any) string {
	b, _ := json.Marshal(map[string]any{"message": map[string]any{
		"role": "ROLE_USER", "messageId": "m1", "contextId": "ctx-1",
		"parts": []any{map[string]any{"data": data, "mediaType": "application/json"}},
	}})
	return string(b)
}

// answer sends a search and checks the shape of its answer; it returns
// the summary and the data part.
func answer(t *testing.T, base, req string) (string, map[string]any) {
	t.Helper()
	status, body := send(t, base, req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, body)
	}
	if _, ok := body["task"]; ok {
		t.Fatal("a search answered with a task")
	}
	msg, _ := body["message"].(map[string]any)
	if msg["role"] != "ROLE_AGENT" || msg["messageId"] == "" || msg["contextId"] != "ctx-1" {
		t.Fatalf("message envelope %v", msg)
	}
	parts, _ := msg["parts"].([]any)
	if len(parts) != 2 {
		t.Fatalf("%d parts, want text and data", len(parts))
	}
	text, _ := parts[0].(map[string]any)["text"].(string)
	dp := parts[1].(map[string]any)
	if dp["mediaType"] != "application/json" {
		t.Fatalf("data part media type %v", dp["mediaType"])
	}
	data, _ := dp["data"].(map[string]any)
	if text == "" || data == nil || strings.Contains(text, "\n") {
		t.Fatalf("summary %q, data %v", text, data)
	}
	return text, data
}

func results(data map[string]any) []map[string]any {
	var out []map[string]any
	rs, _ := data["results"].([]any)
	for _, r := range rs {
		out = append(out, r.(map[string]any))
	}
	return out
}

func TestSearchOverHTTP(t *testing.T) {
	s := start(t, nil)
	before, err := s.Core().DB.Digest()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("data part", func(t *testing.T) {
		text, data := answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "bbolt database is locked", "limit": 2}))
		rs := results(data)
		if data["query"] != "bbolt database is locked" || len(rs) != 2 || rs[0]["id"] != "bbolt-timeout-open-locked" {
			t.Fatalf("data %v", data)
		}
		for _, k := range []string{"source", "id", "title", "kind", "product", "environment", "score", "snippet", "pageUrl", "url", "updatedAt"} {
			if _, ok := rs[0][k]; !ok {
				t.Errorf("result lacks %q: %v", k, rs[0])
			}
		}
		if _, ok := rs[0]["body"]; ok {
			t.Error("a search result carries the body")
		}
		if pu, _ := rs[0]["pageUrl"].(string); rs[0]["source"] != "record" || !strings.HasSuffix(pu, "/records/bbolt-timeout-open-locked") {
			t.Errorf("source %v, pageUrl %v", rs[0]["source"], rs[0]["pageUrl"])
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", rs[0]["updatedAt"].(string)); err != nil {
			t.Errorf("updatedAt %v: %v", rs[0]["updatedAt"], err)
		}
		if !strings.HasPrefix(text, "Found 2 records") {
			t.Errorf("summary %q", text)
		}
	})

	t.Run("a text-only message is a search", func(t *testing.T) {
		_, data := answer(t, s.URL(), `{"message":{"role":"ROLE_USER","messageId":"m2","contextId":"ctx-1","parts":[{"text":"pod keeps restarting with crashloopbackoff"}]}}`)
		rs := results(data)
		if len(rs) == 0 || rs[0]["id"] != "kubernetes-crashloopbackoff" {
			t.Fatalf("results %v", rs)
		}
	})

	t.Run("the default limit is 3", func(t *testing.T) {
		_, data := answer(t, s.URL(), `{"message":{"role":"ROLE_USER","messageId":"m2","contextId":"ctx-1","parts":[{"text":"bbolt"}]}}`)
		if rs := results(data); len(rs) != 3 {
			t.Fatalf("%d results, want 3", len(rs))
		}
	})

	t.Run("filters", func(t *testing.T) {
		_, data := answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "too many open files", "environment": "macos", "limit": 5}))
		rs := results(data)
		if len(rs) != 1 || rs[0]["id"] != "macos-too-many-open-files" {
			t.Fatalf("results %v", rs)
		}
	})

	t.Run("the honest miss", func(t *testing.T) {
		text, data := answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "sourdough levain hydration"}))
		if rs, ok := data["results"].([]any); !ok || len(rs) != 0 {
			t.Fatalf("results %v, want []", data["results"])
		}
		if !strings.Contains(text, `No knowledge records or answered discussions match "sourdough levain hydration"`) {
			t.Fatalf("summary %q", text)
		}
	})

	t.Run("research", func(t *testing.T) {
		_, data := answer(t, s.URL(), searchBody(map[string]any{"action": "research", "query": "start request repeated too quickly", "limit": 1}))
		rs := results(data)
		if len(rs) != 1 || !strings.Contains(rs[0]["body"].(string), "StartLimitBurst") {
			t.Fatalf("research results %v", rs)
		}
	})

	for _, tt := range []struct {
		name  string
		data  map[string]any
		field string
	}{
		{"limit 0", map[string]any{"action": "search", "query": "x", "limit": 0}, "data.limit"},
		{"limit 6", map[string]any{"action": "search", "query": "x", "limit": 6}, "data.limit"},
		{"limit as a string", map[string]any{"action": "search", "query": "x", "limit": "3"}, "data.limit"},
		{"fractional limit", map[string]any{"action": "search", "query": "x", "limit": 2.5}, "data.limit"},
		{"empty query", map[string]any{"action": "search", "query": ""}, "data.query"},
		{"blank query", map[string]any{"action": "research", "query": "  \t "}, "data.query"},
		{"missing query", map[string]any{"action": "search"}, "data.query"},
		{"query too long", map[string]any{"action": "search", "query": strings.Repeat("a", 1001)}, "data.query"},
		{"query not a string", map[string]any{"action": "search", "query": 7}, "data.query"},
		{"filter with a newline", map[string]any{"action": "search", "query": "x", "kind": "a\nb"}, "data.kind"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := send(t, s.URL(), searchBody(tt.data))
			e, _ := body["error"].(map[string]any)
			details, _ := e["details"].([]any)
			if status != http.StatusBadRequest || len(details) == 0 {
				t.Fatalf("status %d, body %v", status, body)
			}
			info := details[0].(map[string]any)
			if info["reason"] != "INVALID_PARAMS" || !strings.HasPrefix(e["message"].(string), tt.field+":") {
				t.Fatalf("error %v, want INVALID_PARAMS on %s", e, tt.field)
			}
		})
	}

	after, err := s.Core().DB.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatal("searching changed the store (a task, a discussion or anything else was written)")
	}
}

func TestSearchRateLimit(t *testing.T) {
	s := start(t, func(c *server.Config) { c.SearchRate = 2 })
	body := searchBody(map[string]any{"action": "search", "query": "bbolt"})
	for i := range 2 {
		if status, b := send(t, s.URL(), body); status != http.StatusOK {
			t.Fatalf("search %d: %d %v", i, status, b)
		}
	}
	c := client.New(s.URL())
	_, err := c.SendMessage(context.Background(), a2a.SendMessageRequest{Message: &a2a.Message{
		Role: a2a.RoleUser, MessageID: "m3", Parts: []a2a.Part{a2a.TextPart("bbolt")},
	}})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusTooManyRequests || ce.RetryAfter == "" {
		t.Fatalf("third search: %v, want 429 with Retry-After", err)
	}
}

// TestTheKnowledgeLoop is the story of issue 13, over HTTP: Alice asks
// how to take a hot backup of a bbolt file; before anyone answers, a
// near-identical question finds her open discussion, and the answer tells
// the agent to join it; Bob replies; a paraphrase of the question then
// finds the answered discussion first, with Bob's reply as its snippet.
func TestTheKnowledgeLoop(t *testing.T) {
	ctx := context.Background()
	s := start(t, func(c *server.Config) { c.PublicURL = "https://kfa.example" })
	mk := func(name string) string {
		a, err := s.Core().Agents.Create(ctx, name, []agents.Scope{agents.ScopeRead, agents.ScopePost})
		if err != nil {
			t.Fatal(err)
		}
		return a.Token
	}
	alice, bob := mk("alice"), mk("bob")
	yes := true
	resp, err := client.New(s.URL(), client.WithToken(alice)).SendMessage(ctx, a2a.SendMessageRequest{
		Message: &a2a.Message{Role: a2a.RoleUser, MessageID: "ask-1", Parts: []a2a.Part{a2a.DataPart(json.RawMessage(
			`{"action":"ask","question":"How do I take a hot backup of a bbolt file?","details":"The server keeps the file open."}`))}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes},
	})
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		DiscussionID string `json:"discussionId"`
	}
	if resp.Task == nil || json.Unmarshal(resp.Task.Metadata, &meta) != nil || meta.DiscussionID == "" {
		t.Fatalf("ask answer %+v", resp)
	}
	id := meta.DiscussionID
	// The index follows the ask through the watch; Sync waits for it here
	// (search's own tests show it happens at once, without a tick).
	if err := s.Core().Index.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	text, data := answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "hot backup of a bbolt file"}))
	rs := results(data)
	if len(rs) == 0 || rs[0]["id"] != id || rs[0]["source"] != "discussion" || rs[0]["status"] != "open" ||
		rs[0]["replyCount"] != 0.0 || rs[0]["pageUrl"] != "https://kfa.example/discussions/"+id || rs[0]["createdAt"] == nil {
		t.Fatalf("before the reply: results %v", rs)
	}
	if _, ok := rs[0]["answeredAt"]; ok {
		t.Fatalf("an open discussion with answeredAt: %v", rs[0])
	}
	if !strings.Contains(text, "join it with discussionId "+id) {
		t.Fatalf("before the reply: summary %q does not name the discussion to join", text)
	}
	// Before the reply, the records that only share "bbolt" and "file"
	// are no answer.
	for _, r := range rs[1:] {
		if r["source"] == "record" {
			t.Fatalf("before the reply, an unrelated record: %v", r)
		}
	}

	const answerText = "Call tx.WriteTo inside a read transaction (db.View): it copies a consistent snapshot while writers carry on."
	if _, err := client.New(s.URL(), client.WithToken(bob)).Reply(ctx, id, answerText); err != nil {
		t.Fatal(err)
	}
	if err := s.Core().Index.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	text, data = answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "bbolt hot backup"}))
	rs = results(data)
	if len(rs) == 0 || rs[0]["id"] != id || rs[0]["status"] != "answered" || rs[0]["snippet"] != answerText ||
		rs[0]["replyCount"] != 1.0 || rs[0]["answeredAt"] == nil {
		t.Fatalf("after the reply: results %v", rs)
	}
	if !strings.HasPrefix(text, `Found 1 answered discussion for "bbolt hot backup": How do I take a hot backup of a bbolt file?`) {
		t.Fatalf("after the reply: summary %q", text)
	}

	// research: the question's details and the replies in full.
	_, data = answer(t, s.URL(), searchBody(map[string]any{"action": "research", "query": "bbolt hot backup", "limit": 1}))
	rs = results(data)
	replies, _ := rs[0]["replies"].([]any)
	if len(rs) != 1 || rs[0]["body"] != "The server keeps the file open." || len(replies) != 1 ||
		replies[0].(map[string]any)["body"] != answerText || replies[0].(map[string]any)["authorName"] != "bob" {
		t.Fatalf("research: %v", rs)
	}
}

// TestImportWhileServing: the admin API imports into the running server,
// and the records are searchable when the call returns.
func TestImportWhileServing(t *testing.T) {
	ctx := context.Background()
	s := start(t, nil)
	admin := client.NewUnix(filepath.Join(s.Core().DB.Path(), "..", "kfa.sock"))
	var in bytes.Buffer
	for i := range 1200 {
		fmt.Fprintf(&in, `{"id":"tapir-%d","kind":"howto","product":"tapir","title":"Tapir feeding schedule %d","body":"Feed the tapir number %d."}`+"\n", i, i, i)
	}
	in.WriteString("{broken\n")
	sum, err := admin.ImportRecords(ctx, &in, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 1200 || sum.Rejected != 1 || len(sum.Errors) != 1 || sum.Errors[0].Line != 1201 {
		t.Fatalf("summary %+v", sum)
	}
	_, data := answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "tapir feeding schedule 1199", "product": "tapir", "limit": 1}))
	if rs := results(data); len(rs) != 1 || rs[0]["id"] != "tapir-1199" {
		t.Fatalf("results %v", rs)
	}
	if _, err := admin.DeleteRecord(ctx, "tapir-1199"); err != nil {
		t.Fatal(err)
	}
	_, data = answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "tapir feeding schedule 1199", "product": "tapir", "limit": 1}))
	if rs := results(data); len(rs) == 1 && rs[0]["id"] == "tapir-1199" {
		t.Fatal("a deleted record is still found")
	}
	st, err := admin.ReindexRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Rebuilt || st.Records != 78+1199 {
		t.Fatalf("reindex %+v", st)
	}
	_, data = answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "tapir feeding schedule 7", "product": "tapir", "limit": 1}))
	if rs := results(data); len(rs) != 1 || rs[0]["id"] != "tapir-7" {
		t.Fatalf("after reindex: %v", rs)
	}
}

// TestSynonymsFile: kfa serve reads <data>/synonyms.txt at start (a bad
// line stops it, named) and kfa records reindex reads it again on the
// live server (a bad line is refused and the index kept).
func TestSynonymsFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "synonyms.txt")
	if err := os.WriteFile(file, []byte("pg, postgresql\nhot backup, snapshot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.DataDir, cfg.SeedSamples = "127.0.0.1:0", dir, true
	if _, err := server.New(cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), file+":2: ") {
		t.Fatalf("a bad synonyms file at start: %v", err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	s := start(t, func(c *server.Config) { c.DataDir = dir; c.AdminSocket = filepath.Join(dir, "kfa.sock") })
	top := func(q string) string {
		_, data := answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": q}))
		if rs := results(data); len(rs) > 0 {
			return rs[0]["id"].(string)
		}
		return ""
	}
	if got := top("elephant"); got != "" {
		t.Fatalf("without synonyms, elephant finds %s", got)
	}
	admin := client.NewUnix(filepath.Join(dir, "kfa.sock"))
	if err := os.WriteFile(file, []byte("pg, postgresql\nhot backup, snapshot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := admin.ReindexRecords(ctx)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusBadRequest || ce.Reason != "INVALID_PARAMS" || !strings.Contains(ce.Message, file+":2: ") {
		t.Fatalf("reindex with a bad file: %v", err)
	}
	if err := os.WriteFile(file, []byte("elephant, postgresql\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := admin.ReindexRecords(ctx)
	if err != nil || !st.Rebuilt || st.SynonymGroups != 1 {
		t.Fatalf("reindex: %+v, %v", st, err)
	}
	if got := top("elephant"); !strings.HasPrefix(got, "postgresql-") {
		t.Fatalf("with elephant, postgresql: elephant finds %q", got)
	}
}
