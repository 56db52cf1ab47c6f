package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/server"
)

// TestSearchEmptyKnowledgeBase: a search on a database without records
// says the knowledge base is empty and how records get in, rather than
// that the query matched nothing; once a record is in, a miss is an
// ordinary miss.
func TestSearchEmptyKnowledgeBase(t *testing.T) {
	for _, writes := range []bool{true, false} {
		s := start(t, func(c *server.Config) { c.SeedSamples = false; c.ContributorWrites = writes })
		q := searchBody(map[string]any{"action": "search", "query": "bbolt timeout"})
		text, data := answer(t, s.URL(), q)
		if rs, ok := data["results"].([]any); !ok || len(rs) != 0 {
			t.Fatalf("results %v, want []", data["results"])
		}
		if !strings.Contains(text, "The knowledge base is empty") || !strings.Contains(text, "kfa records import") ||
			strings.Contains(text, "ask-network") != writes {
			t.Fatalf("empty base, contributor writes %v: summary %q", writes, text)
		}

		c := client.NewUnix(filepath.Join(filepath.Dir(s.Core().DB.Path()), "kfa.sock"))
		line := `{"id":"r1","kind":"fix","title":"bbolt timeout","body":"Another process holds the file lock."}` + "\n"
		if _, err := c.ImportRecords(context.Background(), strings.NewReader(line), true); err != nil {
			t.Fatal(err)
		}
		text, _ = answer(t, s.URL(), searchBody(map[string]any{"action": "search", "query": "sourdough levain hydration"}))
		if !strings.Contains(text, "No knowledge records or answered discussions match") || strings.Contains(text, "empty") {
			t.Fatalf("a miss on a base with records: summary %q", text)
		}
		text, _ = answer(t, s.URL(), q)
		if !strings.Contains(text, "Found 1 record") {
			t.Fatalf("after the import: summary %q", text)
		}
	}
}
