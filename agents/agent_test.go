package agents

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseScopes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"read,post", "read,post", true},
		{"post,read", "read,post", true},
		{" post , post ", "post", true},
		{"read", "read", true},
		{"", "", false},
		{",", "", false},
		{"admin", "", false},
		{"read,write", "", false},
		{"moderate,read", "read,moderate", true},
		{"moderate,post,read", "read,post,moderate", true},
	} {
		got, err := ParseScopes(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseScopes(%q) err = %v", tc.in, err)
			continue
		}
		a := Agent{Scopes: got}
		if tc.ok && strings.Join(a.ScopeStrings(), ",") != tc.want {
			t.Errorf("ParseScopes(%q) = %v, want %s", tc.in, got, tc.want)
		}
	}
}

func TestPostImpliesRead(t *testing.T) {
	if !(Agent{Scopes: []Scope{ScopePost}}).Has(ScopeRead) {
		t.Error("post should imply read")
	}
	if (Agent{Scopes: []Scope{ScopeRead}}).Has(ScopePost) {
		t.Error("read must not imply post")
	}
	if m := (Agent{Scopes: []Scope{ScopeModerate}}); !m.Has(ScopeRead) || m.Has(ScopePost) {
		t.Error("moderate should imply read, and nothing else")
	}
	if (Agent{Scopes: []Scope{ScopePost}}).Has(ScopeModerate) {
		t.Error("post must not imply moderate")
	}
}

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{
		"build-bot": true, "Ünïcode agent": true, strings.Repeat("x", MaxNameLen): true,
		"": false, "   ": false, strings.Repeat("x", MaxNameLen+1): false, "bad\nname": false, "bad\xff": false,
	} {
		if err := ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v", name, err)
		}
	}
}

func TestTokens(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || !WellFormed(a) || len(a) != TokenLen || !strings.HasPrefix(a, TokenPrefix) {
		t.Fatalf("tokens %q %q", a, b)
	}
	if len(a)-len(TokenPrefix) < 32 { // 160 bits need at least 32 base32 characters
		t.Fatalf("token too short: %d", len(a))
	}
	for _, bad := range []string{"", "kfa_", a[:len(a)-1], a + "a", "xyz_" + a[4:], strings.ToUpper(a), a[:10] + "!" + a[11:]} {
		if WellFormed(bad) {
			t.Errorf("WellFormed(%q) = true", bad)
		}
	}
	if DigestOf(a) == DigestOf(b) {
		t.Fatal("digests collide")
	}
}

func TestPermit(t *testing.T) {
	reader := Agent{ID: "01JD0000000000000000000001", Name: "rita", Scopes: []Scope{ScopeRead}}
	writer := Agent{ID: "01JD0000000000000000000002", Name: "wes", Scopes: []Scope{ScopePost}}
	for _, tc := range []struct {
		name string
		a    Agent
		need Scope
		ok   bool
	}{
		{"read by a reader", reader, ScopeRead, true},
		{"post by a reader", reader, ScopePost, false},
		{"post by a writer", writer, ScopePost, true},
		{"read by a writer (post implies read)", writer, ScopeRead, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Permit(tc.need, "replying")
			if (err == nil) != tc.ok {
				t.Fatalf("Permit = %v, ok want %v", err, tc.ok)
			}
			var se *ScopeError
			if err != nil && (!errors.As(err, &se) || se.Need != tc.need || se.Agent.ID != tc.a.ID ||
				err.Error() != "replying needs the post scope; agent 01JD0000000000000000000001 (rita) has the scopes read") {
				t.Fatalf("the refusal does not say who lacks what: %v", err)
			}
		})
	}
}

func TestMayAct(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    *Agent
		want error
	}{
		{name: "an active agent", a: &Agent{ID: "a"}},
		{name: "a revoked agent", a: &Agent{ID: "a", DisabledAt: time.Unix(1, 0)}, want: ErrRevoked},
		{name: "no agent", a: nil, want: ErrRevoked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := MayAct(tc.a)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("MayAct: %v, want %v", err, tc.want)
			}
			if err != nil && !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("a revoked agent's refusal is not an invalid token: %v", err)
			}
		})
	}
}
