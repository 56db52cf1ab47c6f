package api

import (
	"encoding/json"
	"testing"
)

func TestResourceMetadata(t *testing.T) {
	m := NewResourceMetadata("https://kfa.example.com/mcp", []string{"https://idp.example.com"}, "kfa", "https://kfa.example.com/docs")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"resource":"https://kfa.example.com/mcp","authorization_servers":["https://idp.example.com"],` +
		`"scopes_supported":["read","post"],"bearer_methods_supported":["header"],` +
		`"resource_name":"kfa",` +
		`"resource_documentation":"https://kfa.example.com/docs"}`
	if string(b) != want {
		t.Fatalf("%s\nwant %s", b, want)
	}
}
