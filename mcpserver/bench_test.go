package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/service"
)

// fixedSearch answers every query with the same five hits: the benchmark
// measures what the MCP surface adds to a search, not the index.
type fixedSearch struct{}

func (fixedSearch) Search(context.Context, service.Caller, knowledge.Query) (knowledge.Result, error) {
	hits := make([]knowledge.Hit, 5)
	for i := range hits {
		hits[i] = knowledge.Hit{ID: "record-" + string(rune('a'+i)), Title: "A title of some length for a record",
			Kind: "fix", Product: "kfa", Score: 1.5, URL: "https://example.com/doc",
			Snippet: strings.Repeat("a snippet of text around the match ", 6), UpdatedAt: time.Unix(1_700_000_000, 0)}
	}
	return knowledge.Result{Hits: hits}, nil
}

// BenchmarkHandlerSearch is one stateless MCP search through Handler,
// with the search itself taking no time.
func BenchmarkHandlerSearch(b *testing.B) {
	srv, err := NewServer(Deps{Search: fixedSearch{}, Records: knowledge.NewService(nil, nil),
		Discussions: discussions.NewService(nil, discussions.Limits{}, nil, nil), PublicURL: "http://kfa.test"})
	if err != nil {
		b.Fatal(err)
	}
	h := NewHandler(srv, HTTPOptions{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"agent card","limit":5}}}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 || !strings.Contains(w.Body.String(), "structuredContent") {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
