package oauth

import "testing"

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
