package oauth

import (
	"encoding/json"
	"testing"
)

func TestWithResourceMetadata(t *testing.T) {
	const u = "https://kfa.example.com/.well-known/oauth-protected-resource"
	for _, tc := range []struct{ in, want string }{
		{`Bearer realm="kfa"`, `Bearer realm="kfa", resource_metadata="` + u + `"`},
		{`Bearer realm="kfa", error="invalid_token", error_description="the token expired"`,
			`Bearer realm="kfa", error="invalid_token", error_description="the token expired", resource_metadata="` + u + `"`},
		{`Bearer realm="kfa", error="insufficient_scope", scope="post"`,
			`Bearer realm="kfa", error="insufficient_scope", scope="post", resource_metadata="` + u + `"`},
		{`Bearer`, `Bearer resource_metadata="` + u + `"`},
		{`Bearer realm="kfa", resource_metadata="x"`, `Bearer realm="kfa", resource_metadata="x"`},
		{`Basic realm="admin"`, `Basic realm="admin"`},
	} {
		if got := WithResourceMetadata(tc.in, u); got != tc.want {
			t.Errorf("WithResourceMetadata(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

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
