package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/server"
)

// TestMCPTools drives /mcp with the official Go SDK client: initialize,
// the tool list, search, fetch, get_changes and whoami, and checks that
// none of it writes anything.
func TestMCPTools(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SeedSamples = true })
	ctx := context.Background()
	alice, ac := h.agent("alice")
	_, bc := h.agent("bob", "read", "post")
	tk := h.ask(ac, "m-1", "How do I read kfa's knowledge from an MCP client?")
	disc := discussionOf(t, tk)
	if _, err := bc.Reply(ctx, disc, "Point the client at /mcp: search, fetch, get_changes and whoami."); err != nil {
		t.Fatal(err)
	}
	before := h.digest()
	cs := mcpSession(t, h, "")

	t.Run("initialize", func(t *testing.T) {
		init := cs.InitializeResult()
		if init.ServerInfo.Name != "kfa" || init.ServerInfo.Version != h.cfg.Version || init.ProtocolVersion == "" {
			t.Fatalf("initialize: %+v %q", init.ServerInfo, init.ProtocolVersion)
		}
		if !strings.Contains(init.Instructions, "ask-network") || !strings.Contains(init.Instructions, "search") {
			t.Fatalf("instructions: %q", init.Instructions)
		}
	})

	t.Run("tools", func(t *testing.T) {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
			if tl.InputSchema == nil || tl.OutputSchema == nil || tl.Title == "" || tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
				t.Errorf("tool %s: schemas %v/%v, title %q, annotations %+v", tl.Name, tl.InputSchema != nil, tl.OutputSchema != nil, tl.Title, tl.Annotations)
			}
		}
		slices.Sort(names)
		if strings.Join(names, ",") != "fetch,get_changes,search,whoami" {
			t.Fatalf("tools: %v", names)
		}
	})

	var hit mcpserver.SearchResult
	t.Run("search", func(t *testing.T) {
		rs := mcpSearch(t, cs, map[string]any{"query": "bolt db file locked when starting a second process"})
		if len(rs) == 0 || len(rs) > 3 || rs[0].ID != "bbolt-timeout-open-locked" {
			t.Fatalf("results: %v", resultIDs(rs))
		}
		hit = rs[0]
		if hit.Source != mcpserver.SourceRecord || hit.URL != "http://kfa.test/records/bbolt-timeout-open-locked" ||
			hit.Title == "" || hit.Snippet == "" || hit.Score <= 0 || hit.SourceURL == "" {
			t.Fatalf("result: %+v", hit)
		}
		rs = mcpSearch(t, cs, map[string]any{"query": "timeout", "limit": 5})
		if len(rs) < 2 {
			t.Fatalf("limit 5: %v", resultIDs(rs))
		}
	})

	t.Run("search with filters", func(t *testing.T) {
		rs := mcpSearch(t, cs, map[string]any{"query": "timeout", "product": "bbolt", "limit": 5})
		if len(rs) == 0 {
			t.Fatal("no result for a product filter that matches")
		}
		for _, r := range rs {
			if r.Product != "bbolt" {
				t.Errorf("product filter bbolt returned %s (%s)", r.ID, r.Product)
			}
		}
		if rs := mcpSearch(t, cs, map[string]any{"query": "timeout", "kind": "no-such-kind"}); len(rs) != 0 {
			t.Fatalf("a kind nothing has: %v", resultIDs(rs))
		}
	})

	t.Run("search finds the answered discussion", func(t *testing.T) {
		if err := h.srv.Core().Index.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		rs := mcpSearch(t, cs, map[string]any{"query": "read kfa knowledge from an MCP client"})
		if len(rs) == 0 || rs[0].ID != disc {
			t.Fatalf("results: %v, want the discussion %s first", resultIDs(rs), disc)
		}
		d := rs[0]
		if d.Source != mcpserver.SourceDiscussion || d.URL != "http://kfa.test/discussions/"+disc || d.Status != "answered" ||
			d.ReplyCount == nil || *d.ReplyCount != 1 || d.AnsweredAt == "" || d.CreatedAt == "" ||
			!strings.HasPrefix(d.Snippet, "Point the client at /mcp") || d.SourceURL != "" || d.UpdatedAt != "" {
			t.Fatalf("discussion result: %+v", d)
		}
	})

	t.Run("a miss is an answer", func(t *testing.T) {
		res := mcpCall(t, cs, mcpserver.ToolSearch, map[string]any{"query": "zyxwv qqqq flibbertigibbet"})
		var out mcpserver.SearchOutput
		mcpOut(t, res, &out)
		if len(out.Results) != 0 || mcpText(res) != `{"results":[]}` {
			t.Fatalf("miss: %s", mcpText(res))
		}
	})

	t.Run("fetch a record", func(t *testing.T) {
		var doc mcpserver.FetchOutput
		mcpOut(t, mcpCall(t, cs, mcpserver.ToolFetch, map[string]any{"id": hit.ID}), &doc)
		rec, err := h.admin.Record(ctx, hit.ID)
		if err != nil {
			t.Fatal(err)
		}
		md := doc.Metadata
		if doc.ID != rec.ID || doc.Title != rec.Title || doc.Text != rec.Body || doc.URL != hit.URL ||
			md.Source != mcpserver.SourceRecord || md.Kind != rec.Kind || md.SourceURL != rec.URL || md.UpdatedAt != rec.UpdatedAt {
			t.Fatalf("fetch: %+v\nrecord: %+v", doc, rec)
		}
	})

	t.Run("fetch a discussion", func(t *testing.T) {
		var doc mcpserver.FetchOutput
		mcpOut(t, mcpCall(t, cs, mcpserver.ToolFetch, map[string]any{"id": disc}), &doc)
		md := doc.Metadata
		if doc.ID != disc || doc.URL != "http://kfa.test/discussions/"+disc || md.Source != mcpserver.SourceDiscussion ||
			md.Status != "answered" || md.ReplyCount == nil || *md.ReplyCount != 1 || md.AuthorName != alice.Name || md.AnsweredAt == "" {
			t.Fatalf("fetch: %+v %+v", doc, md)
		}
		for _, want := range []string{"How do I read kfa's knowledge from an MCP client?", "Point the client at /mcp", "bob"} {
			if !strings.Contains(doc.Text, want) {
				t.Errorf("text lacks %q:\n%s", want, doc.Text)
			}
		}
	})

	t.Run("fetch an unknown id", func(t *testing.T) {
		for _, id := range []string{"no-such-record", "01J0000000000000000000000Z", "a b"} {
			mcpToolError(t, mcpCall(t, cs, mcpserver.ToolFetch, map[string]any{"id": id}), `"`+id+`"`)
		}
	})

	t.Run("whoami", func(t *testing.T) {
		var out mcpserver.WhoamiOutput
		mcpOut(t, mcpCall(t, cs, mcpserver.ToolWhoami, nil), &out)
		if out.Authenticated || out.AgentID != "" {
			t.Fatalf("anonymous: %+v", out)
		}
		withToken := mcpSession(t, h, alice.Token)
		mcpOut(t, mcpCall(t, withToken, mcpserver.ToolWhoami, map[string]any{}), &out)
		if !out.Authenticated || out.AgentID != alice.ID || out.Name != "alice" || strings.Join(out.Scopes, ",") != "read,post" {
			t.Fatalf("alice: %+v", out)
		}
		// A token changes nothing else: search stays anonymous.
		if rs := mcpSearch(t, withToken, map[string]any{"query": "agent card well-known"}); len(rs) == 0 {
			t.Fatal("search with a bearer found nothing")
		}
		if _, err := mcpConnect(t, h, "kfa_notatoken"); err == nil {
			t.Fatal("a bad bearer connected")
		}
		resp, body := h.mcpPost(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`,
			"Authorization", "Bearer kfa_notatoken")
		e := decodeRPCErr(t, body)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer realm="kfa", error="invalid_token"`) ||
			string(e.ID) != "9" || !strings.Contains(e.Error.Message, "invalid, expired or revoked") {
			t.Fatalf("bad bearer: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	})

	if after := h.digest(); after != before {
		t.Fatal("MCP calls changed the store")
	}
}

// TestMCPChanges walks the records' change feed in pages of 7 and
// compares what it says exists with the records kfa lists.
func TestMCPChanges(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SeedSamples = true })
	ctx := context.Background()
	if _, err := h.admin.DeleteRecord(ctx, "bbolt-timeout-open-locked"); err != nil {
		t.Fatal(err)
	}
	lines := `{"id":"mcp-new","kind":"fix","title":"A record added after the samples","body":"Added to see it in the change feed."}` + "\n" +
		`{"id":"a2a-agent-card-well-known","kind":"reference","title":"The agent card, changed","body":"Changed to see it twice in the feed."}` + "\n"
	if _, err := h.admin.ImportRecords(ctx, strings.NewReader(lines), true); err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, h, "")

	state := map[string]string{} // id -> last op
	var all []mcpserver.Change
	cursor := ""
	for page := 0; ; page++ {
		var out mcpserver.ChangesOutput
		mcpOut(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": cursor, "limit": 7}), &out)
		if len(out.Changes) > 7 || (out.HasMore && len(out.Changes) != 7) {
			t.Fatalf("page %d: %d changes, hasMore %v", page, len(out.Changes), out.HasMore)
		}
		for _, c := range out.Changes {
			if c.Op != "upsert" && c.Op != "delete" || c.UpdatedAt == "" || c.Cursor == "" {
				t.Fatalf("change %+v", c)
			}
			state[c.ID] = c.Op
		}
		all = append(all, out.Changes...)
		if n := len(out.Changes); n > 0 && out.NextCursor != out.Changes[n-1].Cursor {
			t.Fatalf("nextCursor %s is not the last change's cursor %s", out.NextCursor, out.Changes[n-1].Cursor)
		}
		cursor = out.NextCursor
		if !out.HasMore {
			break
		}
		if page > 100 {
			t.Fatal("the feed does not end")
		}
	}
	var existing []string
	for id, op := range state {
		if op == "upsert" {
			existing = append(existing, id)
		}
	}
	slices.Sort(existing)
	var listed []string
	for after := ""; ; {
		p, err := h.admin.Records(ctx, after, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Records {
			listed = append(listed, r.ID)
		}
		if after = p.NextAfter; after == "" {
			break
		}
	}
	if strings.Join(existing, ",") != strings.Join(listed, ",") {
		t.Fatalf("the feed says\n%v\nkfa records list says\n%v", existing, listed)
	}
	if state["bbolt-timeout-open-locked"] != "delete" || all[len(all)-1].ID != "a2a-agent-card-well-known" {
		t.Fatalf("the last changes: %+v", all[len(all)-3:])
	}

	// A saved nextCursor sees only later changes; a change's cursor
	// resumes right after it.
	var out mcpserver.ChangesOutput
	mcpOut(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": cursor}), &out)
	if len(out.Changes) != 0 || out.HasMore || out.NextCursor != cursor {
		t.Fatalf("at the end: %+v", out)
	}
	if _, err := h.admin.DeleteRecord(ctx, "mcp-new"); err != nil {
		t.Fatal(err)
	}
	mcpOut(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": cursor}), &out)
	if len(out.Changes) != 1 || out.Changes[0].ID != "mcp-new" || out.Changes[0].Op != "delete" {
		t.Fatalf("after the end: %+v", out)
	}
	mcpOut(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": all[len(all)-3].Cursor, "limit": 2}), &out)
	if len(out.Changes) != 2 || out.Changes[0].Cursor != all[len(all)-2].Cursor || !out.HasMore {
		t.Fatalf("from a change's cursor: %+v", out)
	}

	// Cursors that are not this feed's are tool errors naming them.
	mcpToolError(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": "not-a-cursor"}), `"not-a-cursor"`)
	far := mcpserver.EncodeCursor(knowledge.Position{At: changelog.Position{Tx: 1 << 40, Seq: 1 << 40}, Epoch: "00000000"})
	mcpToolError(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": far}), far)
	mcpToolError(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"limit": 501}), "limit")
}

// TestMCPSearchMatchesA2A: one search implementation behind two surfaces.
// For every query of the relevance table (with its filters), MCP search
// and A2A search return the same ids in the same order.
func TestMCPSearchMatchesA2A(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SeedSamples = true; c.SearchRate = 0 })
	cases := relevanceCases(t)
	cs := mcpSession(t, h, "")
	for _, c := range cases {
		args := map[string]any{"query": c.Query, "limit": 5}
		for k, v := range map[string]string{"kind": c.Kind, "product": c.Product, "environment": c.Environment} {
			if v != "" {
				args[k] = v
			}
		}
		got := resultIDs(mcpSearch(t, cs, args))
		want := a2aSearchIDs(t, h, args)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: MCP %v, A2A %v", c.Query, got, want)
		}
	}
}

// a2aSearchIDs runs a search through message:send and returns its ids.
func a2aSearchIDs(t *testing.T, h *harness, data map[string]any) []string {
	t.Helper()
	d := map[string]any{"action": "search"}
	for k, v := range data {
		d[k] = v
	}
	b, _ := json.Marshal(d)
	res, err := h.anon.SendMessage(context.Background(), dataMessage(b))
	if err != nil || res.Message == nil {
		t.Fatalf("A2A search %s: %v", b, err)
	}
	var out struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	for _, p := range res.Message.Parts {
		if p.Data != nil {
			if err := json.Unmarshal(p.Data, &out); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := []string{}
	for _, r := range out.Results {
		ids = append(ids, r.ID)
	}
	return ids
}

// dataMessage is a SendMessage request with one data part.
func dataMessage(data []byte) a2a.SendMessageRequest {
	return a2a.SendMessageRequest{Message: &a2a.Message{MessageID: ulid.Make().String(), Role: a2a.RoleUser,
		Parts: []a2a.Part{a2a.DataPart(data)}}}
}

// relevanceCase is one query of samples/relevance.json.
type relevanceCase struct {
	Query       string `json:"query"`
	Kind        string `json:"kind"`
	Product     string `json:"product"`
	Environment string `json:"environment"`
}

func relevanceCases(t *testing.T) []relevanceCase {
	t.Helper()
	b, err := os.ReadFile("../samples/relevance.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []relevanceCase
	if err := json.Unmarshal(b, &cs); err != nil || len(cs) == 0 {
		t.Fatalf("samples/relevance.json: %v (%d cases)", err, len(cs))
	}
	return cs
}

// TestMCPChangesAfterRetention: once retention trimmed the feed, a saved
// cursor from before the trim is refused as too old, and an empty cursor
// still lists every record, each once.
func TestMCPChangesAfterRetention(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SeedSamples = true })
	ctx := context.Background()
	cs := mcpSession(t, h, "")
	var first mcpserver.ChangesOutput
	mcpOut(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"limit": 2}), &first)
	if _, err := h.admin.DeleteRecord(ctx, "bbolt-timeout-open-locked"); err != nil {
		t.Fatal(err)
	}
	line := `{"id":"a2a-agent-card-well-known","kind":"reference","title":"The agent card, changed","body":"Changed."}` + "\n"
	if _, err := h.admin.ImportRecords(ctx, strings.NewReader(line), true); err != nil {
		t.Fatal(err)
	}
	// What the server's trimmer does once the entries are past the
	// horizon; here the horizon is now.
	if n, err := h.srv.Core().Store.TrimLog(ctx, time.Now().Add(time.Hour)); err != nil || n == 0 {
		t.Fatalf("trim: %d, %v", n, err)
	}
	mcpToolError(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": first.NextCursor}),
		"is too old: the change feed no longer holds the changes after it; start again with an empty cursor")
	seen := map[string]int{}
	cursor := ""
	for {
		var page mcpserver.ChangesOutput
		mcpOut(t, mcpCall(t, cs, mcpserver.ToolGetChanges, map[string]any{"cursor": cursor, "limit": 50}), &page)
		for _, c := range page.Changes {
			seen[c.ID]++
		}
		cursor = page.NextCursor
		if !page.HasMore {
			break
		}
	}
	list, err := h.admin.Records(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != list.Total {
		t.Fatalf("an empty cursor lists %d records, the store holds %d", len(seen), list.Total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s is in the trimmed feed %d times", id, n)
		}
	}
}
