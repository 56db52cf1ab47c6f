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
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/service"
)

// fixedService answers every query with the same five hits: the
// benchmark measures what the MCP surface adds to a search, not the
// index. It holds nothing else.
type fixedService struct{}

func (fixedService) ResourceMetadataURL(string) string { return "" }

func (fixedService) Record(context.Context, string) (knowledge.Record, error) {
	return knowledge.Record{}, knowledge.ErrNotFound
}

func (fixedService) RecordChanges(context.Context, knowledge.Position, int) (knowledge.ChangesPage, error) {
	return knowledge.ChangesPage{}, nil
}

func (fixedService) GetDiscussion(context.Context, string, service.RepliesQuery) (discussions.Discussion, discussions.Replies, error) {
	return discussions.Discussion{}, discussions.Replies{}, discussions.ErrNotFound
}

func (fixedService) Followed(context.Context, string) (peers.Document, error) {
	return peers.Document{}, peers.ErrNoDocument
}

func (fixedService) Authenticate(_ context.Context, cred service.Credential, _ bool) (service.Caller, error) {
	return service.Caller{Addr: cred.Addr}, nil
}

func (fixedService) Search(context.Context, service.Caller, knowledge.Query) (knowledge.Result, error) {
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
	srv, err := NewServer(Deps{Service: fixedService{}, PublicURL: "http://kfa.test"})
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
