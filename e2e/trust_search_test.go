package e2e

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
)

// trustHit is a search hit's trust fields.
type trustHit struct {
	ID            string  `json:"id"`
	Votes         int     `json:"votes"`
	Trust         float64 `json:"trust"`
	Score         float64 `json:"score"`
	AnswerReplyID string  `json:"answerReplyId"`
	Verifications struct {
		Worked       int    `json:"worked"`
		Failed       int    `json:"failed"`
		LastWorkedAt string `json:"lastWorkedAt"`
	} `json:"verifications"`
	Author *struct {
		ID         string `json:"id"`
		Reputation int64  `json:"reputation"`
	} `json:"author"`
}

// trustSearch runs an A2A search on h with data (action search) and
// returns the hits.
func trustSearch(t *testing.T, c *client.Client, data map[string]any) []trustHit {
	t.Helper()
	d := map[string]any{"action": "search", "limit": 5}
	for k, v := range data {
		d[k] = v
	}
	b, _ := json.Marshal(d)
	res, err := c.SendMessage(bg(), dataMessage(b))
	if err != nil || res.Message == nil {
		t.Fatalf("A2A search %s: %v", b, err)
	}
	var out struct {
		Results []trustHit `json:"results"`
	}
	for _, p := range res.Message.Parts {
		if p.Data != nil {
			if err := json.Unmarshal(p.Data, &out); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.Results
}

func hitIDs(hs []trustHit) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// TestTrustRanking: of three discussions that answer one question alike,
// the one with an accepted answer ranks first, then the one whose answer
// others voted up, then the newer one; a "worked" report lifts an answer
// above votes; minScore, minTrust and minReputation keep what reaches
// them.
func TestTrustRanking(t *testing.T) {
	h := start(t, func(c *server.Config) { c.SearchRate = 0 })
	ctx := bg()
	_, alice := h.agent("alice")
	bobA, bob := h.agent("bob")
	frankA, frank := h.agent("frank")
	_, gina := h.agent("gina")
	var voters []*client.Client
	for _, n := range []string{"carol", "dan", "erin"} {
		_, c := h.agent(n)
		voters = append(voters, c)
	}
	const q, answer = "How do I compact a walrus archive?", "Run walrus compact on the archive, offline."
	accepted, acceptedReply := answeredBy(t, h, alice, bob, "k1", q, answer)
	voted, votedReply := answeredBy(t, h, alice, frank, "k2", q, answer)
	newer, newerReply := answeredBy(t, h, alice, gina, "k3", q, answer)
	if _, err := alice.Accept(ctx, accepted, acceptedReply); err != nil {
		t.Fatal(err)
	}
	for _, v := range voters {
		if _, err := v.Vote(ctx, voted, votedReply, 1); err != nil {
			t.Fatal(err)
		}
	}
	caughtUp(t, h, "the accept and the votes")
	query := map[string]any{"query": "compact walrus archive"}
	hits := trustSearch(t, h.anon, query)
	if got, want := hitIDs(hits), []string{accepted, voted, newer}; !slices.Equal(got, want) {
		t.Fatalf("ranked %v, want the accepted %s, the voted %s, the newer %s", got, accepted, voted, newer)
	}
	byID := map[string]trustHit{}
	for _, hit := range hits {
		byID[hit.ID] = hit
	}
	if v := byID[voted]; v.Votes != 3 || v.AnswerReplyID != votedReply || v.Author == nil || v.Author.ID != frankA.ID ||
		v.Author.Reputation != 15 || v.Trust <= 0 {
		t.Fatalf("the voted hit %+v", v)
	}
	if a := byID[accepted]; a.Author == nil || a.Author.ID != bobA.ID || a.Author.Reputation != 15 || a.AnswerReplyID != acceptedReply {
		t.Fatalf("the accepted hit %+v", a)
	}
	for _, tc := range []struct {
		name   string
		filter map[string]any
		want   []string
	}{
		{"minScore", map[string]any{"minScore": 1}, []string{voted}},
		{"minReputation", map[string]any{"minReputation": 10}, []string{accepted, voted}},
		{"minTrust", map[string]any{"minTrust": 0.2}, []string{voted}},
		{"all three", map[string]any{"minScore": 0, "minTrust": -5, "minReputation": 0}, []string{accepted, voted, newer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := map[string]any{"query": "compact walrus archive"}
			for k, v := range tc.filter {
				data[k] = v
			}
			if got := hitIDs(trustSearch(t, h.anon, data)); !slices.Equal(got, tc.want) {
				t.Fatalf("%v: %v, want %v", tc.filter, got, tc.want)
			}
		})
	}
	// The MCP search tool ranks and filters alike, and its results carry
	// the same signals and author.
	cs := mcpSession(t, h, "")
	if got := resultIDs(mcpSearch(t, cs, map[string]any{"query": "compact walrus archive"})); !slices.Equal(got, []string{accepted, voted, newer}) {
		t.Fatalf("MCP ranked %v, want %v", got, []string{accepted, voted, newer})
	}
	mr := mcpSearch(t, cs, map[string]any{"query": "compact walrus archive", "minScore": 1})
	if len(mr) != 1 || mr[0].ID != voted || mr[0].Votes != 3 || mr[0].Trust <= 0 || mr[0].AnswerReplyID != votedReply ||
		mr[0].Author == nil || mr[0].Author.ID != frankA.ID || mr[0].Author.Reputation != 15 {
		t.Fatalf("MCP search with minScore 1: %+v", mr)
	}
	// A report that the newer answer worked puts it above the votes (a
	// fresh "worked" weighs ten fresh up votes).
	if _, err := voters[0].Verify(ctx, newer, newerReply, "worked", "linux", ""); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, h, "the report")
	if got, want := hitIDs(trustSearch(t, h.anon, query)), []string{accepted, newer, voted}; !slices.Equal(got, want) {
		t.Fatalf("after a worked report: %v, want %v", got, want)
	}
	mr = mcpSearch(t, cs, map[string]any{"query": "compact walrus archive", "minTrust": 0.5})
	if len(mr) != 1 || mr[0].ID != newer || mr[0].Verifications.Worked != 1 || mr[0].Verifications.LastWorkedAt == "" {
		t.Fatalf("MCP search with minTrust 0.5 after the report: %+v", mr)
	}
}

// TestPostgresTrustAcrossProcesses: two kfa serve on one PostgreSQL
// database. An agent searches over A2A on B, reports with the verify
// action through A that the hit's answer worked, and B's next search
// shows the report, the trust and the author's reputation within a
// second; a vote through B and a moderator's reset through A reach A's
// and B's searches the same way (each process's index follows the change
// log).
func TestPostgresTrustAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	a := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0 })
	b := start(t, func(c *server.Config) { c.Store = url; c.SearchRate = 0 })
	ctx := bg()
	_, alice := a.agent("alice")
	bobA, bob := a.agent("bob")
	carolA, _ := a.agent("carol")
	_, danB := b.agent("dan")
	_, mod := a.agent("mia", "read", "moderate")
	carolOnA := client.New(a.url, client.WithToken(carolA.Token))
	carolOnB := client.New(b.url, client.WithToken(carolA.Token))
	disc, rid := answeredBy(t, a, alice, bob, "x1", "How do I thaw a frozen otter queue?", "Restart the otter consumer.")
	caughtUp(t, b, "an answer on A")
	query := map[string]any{"query": "thaw frozen otter queue"}
	hits := trustSearch(t, carolOnB, query)
	if len(hits) == 0 || hits[0].ID != disc || hits[0].AnswerReplyID != rid || hits[0].Verifications.Worked != 0 {
		t.Fatalf("B's first search: %+v", hits)
	}
	verify, _ := json.Marshal(map[string]any{"action": "verify", "discussionId": hits[0].ID, "replyId": hits[0].AnswerReplyID,
		"outcome": "worked", "environment": "linux"})
	res, err := carolOnA.SendMessage(ctx, dataMessage(verify))
	if err != nil || res.Message == nil {
		t.Fatalf("verify over A2A: %+v %v", res, err)
	}
	caughtUp(t, b, "the report through A")
	hit := trustSearch(t, carolOnB, query)[0]
	if hit.Verifications.Worked != 1 || hit.Verifications.LastWorkedAt == "" || hit.Trust < 0.9 || hit.Author == nil ||
		hit.Author.ID != bobA.ID || hit.Author.Reputation != 10 {
		t.Fatalf("B's search after the report: %+v", hit)
	}
	if _, err := danB.Vote(ctx, disc, rid, 1); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, a, "a vote through B")
	if hit := trustSearch(t, a.anon, query)[0]; hit.Votes != 1 || hit.Author.Reputation != 15 {
		t.Fatalf("A's search after the vote: %+v", hit)
	}
	if _, err := mod.ResetReputation(ctx, bobA.ID, "test"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, b, "a reset through A")
	if hit := trustSearch(t, b.anon, query)[0]; hit.Author.Reputation != 0 || hit.Votes != 1 {
		t.Fatalf("B's search after the reset: %+v", hit)
	}
}
