package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kfa-project/kfa/changelog"
)

var idp = Identity{Issuer: "https://idp.example.com/realms/kfa", Subject: "c0ffee"}

func TestValidateIdentity(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   Identity
		ok   bool
	}{
		{"https", idp, true},
		{"loopback http", Identity{Issuer: "http://127.0.0.1:9000", Subject: "s"}, true},
		{"no issuer", Identity{Subject: "s"}, false},
		{"no subject", Identity{Issuer: idp.Issuer}, false},
		{"relative issuer", Identity{Issuer: "idp.example.com", Subject: "s"}, false},
		{"issuer with query", Identity{Issuer: "https://idp.example.com/?a=b", Subject: "s"}, false},
		{"issuer with user", Identity{Issuer: "https://u:p@idp.example.com", Subject: "s"}, false},
		{"other scheme", Identity{Issuer: "ftp://idp.example.com", Subject: "s"}, false},
		{"control character", Identity{Issuer: idp.Issuer, Subject: "a\x00b"}, false},
		{"long subject", Identity{Issuer: idp.Issuer, Subject: strings.Repeat("s", MaxSubjectLen+1)}, false},
		{"bad UTF-8", Identity{Issuer: idp.Issuer, Subject: "\xff"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateIdentity(tc.id)
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrInvalidIdentity) {
				t.Fatalf("ValidateIdentity(%+v) = %v, want ok=%v", tc.id, err, tc.ok)
			}
		})
	}
}

func TestDecideLink(t *testing.T) {
	alice := &Agent{ID: "A1", Name: "alice", CreatedAt: t0}
	linked := &Agent{ID: "A1", Name: "alice", CreatedAt: t0, Issuer: idp.Issuer, Subject: idp.Subject}
	other := &Agent{ID: "A1", Name: "alice", CreatedAt: t0, Issuer: idp.Issuer, Subject: "someone-else"}
	revoked := &Agent{ID: "A1", Name: "alice", CreatedAt: t0, DisabledAt: t0}
	bob := &Agent{ID: "A2", Name: "bob", CreatedAt: t0, Issuer: idp.Issuer, Subject: idp.Subject}
	bobRevoked := &Agent{ID: "A2", Name: "bob", CreatedAt: t0, DisabledAt: t0, Issuer: idp.Issuer, Subject: idp.Subject}
	l := Link{AgentID: "A1", Identity: idp, At: t0}
	replace := Link{AgentID: "A1", Identity: idp, At: t0, Replace: true, By: "ops"}
	for _, tc := range []struct {
		name     string
		st       LinkState
		l        Link
		want     error
		says     string // a part of the refusal
		changed  bool
		replaced bool
	}{
		{"new link", LinkState{Agent: alice}, l, nil, "", true, false},
		{"new link, replacing nothing", LinkState{Agent: alice}, replace, nil, "", true, false},
		{"the same link again", LinkState{Agent: linked, Linked: linked}, l, nil, "", false, false},
		{"the same link again, replacing", LinkState{Agent: linked, Linked: linked}, replace, nil, "", false, false},
		{"unknown agent", LinkState{}, l, ErrNotFound, "", false, false},
		{"revoked agent", LinkState{Agent: revoked}, l, ErrDisabled, "", false, false},
		{"a revoked agent does not take a revoked one's identity", LinkState{Agent: revoked, Linked: bobRevoked}, replace, ErrDisabled, "", false, false},
		{"identity of another agent", LinkState{Agent: alice, Linked: bob}, l, ErrLinkConflict, "linked to agent A2 already", false, false},
		{"identity of an active agent, replacing", LinkState{Agent: alice, Linked: bob}, replace, ErrLinkConflict,
			"agent A2, which is active: --replace moves only the identity of a revoked agent; revoke A2 first", false, false},
		{"identity of a revoked agent", LinkState{Agent: alice, Linked: bobRevoked}, l, ErrLinkConflict,
			"linked to agent A2, which is revoked; to give it a new agent, link it again with --replace", false, false},
		{"identity of a revoked agent, replacing", LinkState{Agent: alice, Linked: bobRevoked}, replace, nil, "", true, true},
		{"agent of another identity", LinkState{Agent: other}, l, ErrLinkConflict, "", false, false},
		{"agent of another identity, replacing", LinkState{Agent: other, Linked: bobRevoked}, replace, ErrLinkConflict,
			"agent A1 is linked to the identity", false, false},
		{"invalid identity", LinkState{Agent: alice}, Link{AgentID: "A1", Identity: Identity{Issuer: "x"}}, ErrInvalidIdentity, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecideLink(tc.st, tc.l)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.says)) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.want, tc.says)
			}
			if err != nil {
				return
			}
			if out.Changed != tc.changed || out.Agent.Identity() != idp || out.Agent.ID != "A1" || (out.Replaced != nil) != tc.replaced {
				t.Fatalf("outcome %+v", out)
			}
			want := 0
			if tc.changed {
				want++
			}
			if tc.replaced {
				want++
			}
			if len(out.Events) != want {
				t.Fatalf("events %+v", out.Events)
			}
			if tc.changed {
				e := out.Events[len(out.Events)-1]
				if e.Kind != changelog.AgentLinked || e.ID != "A1" || e.Ref != idp.Issuer || e.Note != idp.Subject || !e.At.Equal(t0) {
					t.Fatalf("event %+v", e)
				}
			}
			if tc.replaced {
				// The revoked agent keeps no identity, and a record of
				// where it went; the log says it was unlinked first.
				r, e := *out.Replaced, out.Events[0]
				if r.ID != "A2" || r.Linked() || r.Active() || r.Moved == nil || *r.Moved != (IdentityMove{Issuer: idp.Issuer,
					Subject: idp.Subject, To: "A1", At: t0, By: "ops"}) {
					t.Fatalf("the replaced agent %+v (moved %+v)", r, r.Moved)
				}
				if e.Kind != changelog.AgentUnlinked || e.ID != "A2" || e.Ref != idp.Issuer || e.Note != idp.Subject {
					t.Fatalf("event %+v", e)
				}
			}
		})
	}
}

func TestDecideResolve(t *testing.T) {
	alice := &Agent{ID: "A1", Name: "alice"}
	revoked := &Agent{ID: "A1", Name: "alice", DisabledAt: t0}
	for _, tc := range []struct {
		name   string
		linked *Agent
		auto   bool
		want   error
		id     string
		create bool
	}{
		{"linked", alice, false, nil, "A1", false},
		{"linked, auto", alice, true, nil, "A1", false},
		{"revoked stays refused", revoked, true, ErrDisabled, "", false},
		{"new identity, auto", nil, true, nil, "", true},
		{"new identity, links only", nil, false, ErrNotLinked, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, create, err := DecideResolve(tc.linked, tc.auto)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) || a.ID != tc.id || create != tc.create {
				t.Fatalf("= %+v, %v, %v; want %s, %v, %v", a, create, err, tc.id, tc.create, tc.want)
			}
		})
	}
}

func TestDecideProvision(t *testing.T) {
	fresh := Agent{ID: "A9", Scopes: ProvisionScopes, CreatedAt: t0}
	p := Provision{Identity: idp, Agent: fresh, Names: []string{"build-bot", "build-bot (idp.example.com)", "build-bot (idp.example.com, 1a2b3c4d)"}}
	existing := &Agent{ID: "A1", Name: "build-bot", Issuer: idp.Issuer, Subject: idp.Subject}
	for _, tc := range []struct {
		name    string
		st      ProvisionState
		want    error
		id      string
		named   string
		created bool
	}{
		{"first token", ProvisionState{NameTaken: []bool{false, false, false}}, nil, "A9", "build-bot", true},
		{"name taken", ProvisionState{NameTaken: []bool{true, false, false}}, nil, "A9", "build-bot (idp.example.com)", true},
		{"both taken: the identity's own", ProvisionState{NameTaken: []bool{true, true, false}}, nil, "A9", "build-bot (idp.example.com, 1a2b3c4d)", true},
		{"every name taken: never shared", ProvisionState{NameTaken: []bool{true, true, true}}, ErrDuplicateName, "", "", false},
		{"a concurrent first token made it", ProvisionState{Linked: existing, NameTaken: []bool{true, false, false}}, nil, "A1", "build-bot", false},
		{"revoked meanwhile", ProvisionState{Linked: &Agent{ID: "A1", DisabledAt: t0}}, ErrDisabled, "", "", false},
		{"names not loaded", ProvisionState{}, ErrInvalidName, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecideProvision(tc.st, p)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			if out.Agent.ID != tc.id || out.Agent.Name != tc.named || out.Created != tc.created || out.Agent.Identity() != idp {
				t.Fatalf("outcome %+v", out)
			}
			if !tc.created {
				if len(out.Events) != 0 {
					t.Fatalf("events without a creation: %+v", out.Events)
				}
				return
			}
			if len(out.Events) != 2 || out.Events[0].Kind != changelog.AgentCreated || out.Events[1].Kind != changelog.AgentLinked ||
				out.Events[1].Ref != idp.Issuer || out.Events[1].Note != idp.Subject {
				t.Fatalf("events %+v", out.Events)
			}
		})
	}
}

// TestProvisionNames: the names a new agent of an identity may take: the
// token's name, that name with its issuer's host, then with the host and
// a part of the identity's hash, longer then: stable (the same identity
// always gets the same), and the identity's own, so that many identities
// of one name at one issuer (every client credentials token of "alice")
// are told apart, and no two agents share one.
func TestProvisionNames(t *testing.T) {
	long := strings.Repeat("n", 80)
	h := func(id Identity, n int) string { return hashPrefix(id)[:n] }
	odd := Identity{Issuer: idp.Issuer, Subject: "\x02"}
	for _, tc := range []struct {
		name string
		hint string
		id   Identity
		want []string
	}{
		{"a username", "alice", idp, []string{"alice", "alice (idp.example.com)", "alice (idp.example.com, " + h(idp, 8) + ")",
			"alice (idp.example.com, " + h(idp, 16) + ")"}},
		{"spaces and controls", "  build\tbot\x00 ", idp, []string{"build bot", "build bot (idp.example.com)",
			"build bot (idp.example.com, " + h(idp, 8) + ")", "build bot (idp.example.com, " + h(idp, 16) + ")"}},
		{"no hint: the subject", "", idp, []string{"c0ffee", "c0ffee (idp.example.com)", "c0ffee (idp.example.com, " + h(idp, 8) + ")",
			"c0ffee (idp.example.com, " + h(idp, 16) + ")"}},
		{"nothing printable: a hash", "\x01", odd, []string{"oauth-" + h(odd, 8), "oauth-" + h(odd, 8) + " (idp.example.com)",
			"oauth-" + h(odd, 8) + " (idp.example.com, " + h(odd, 8) + ")", "oauth-" + h(odd, 8) + " (idp.example.com, " + h(odd, 16) + ")"}},
		{"long hint", long, idp, []string{long[:MaxNameLen], long[:MaxNameLen-len(" (idp.example.com)")] + " (idp.example.com)",
			long[:MaxNameLen-len(" (idp.example.com, 12345678)")] + " (idp.example.com, " + h(idp, 8) + ")",
			long[:MaxNameLen-len(" (idp.example.com, 1234567812345678)")] + " (idp.example.com, " + h(idp, 16) + ")"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ProvisionNames(tc.hint, tc.id)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("ProvisionNames(%q) = %q, want %q", tc.hint, got, tc.want)
			}
			for _, n := range got {
				if err := ValidateName(n); err != nil || utf8.RuneCountInString(n) > MaxNameLen {
					t.Fatalf("%q: %v", n, err)
				}
			}
		})
	}
	// A hundred identities named alice at one issuer: a hundred names.
	seen := map[string]bool{}
	for i := range 100 {
		names := ProvisionNames("alice", Identity{Issuer: "http://127.0.0.1:8081", Subject: fmt.Sprintf("client-%d", i)})
		own := NameKey(names[2])
		if seen[own] {
			t.Fatalf("two identities share the name %q", names[2])
		}
		seen[own] = true
		if again := ProvisionNames("alice", Identity{Issuer: "http://127.0.0.1:8081", Subject: fmt.Sprintf("client-%d", i)}); again[2] != names[2] {
			t.Fatalf("the name is not stable: %q, then %q", names[2], again[2])
		}
	}
}

func hashPrefix(id Identity) string {
	sum := sha256.Sum256([]byte(id.Issuer + "\x00" + id.Subject))
	return hex.EncodeToString(sum[:8])
}
