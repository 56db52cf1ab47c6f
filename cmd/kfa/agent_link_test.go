package main

import (
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
)

// TestAgentLink: kfa agent link gives an agent an OAuth identity, with
// the server running or not; the list shows it; a link never moves, and
// a bad one says why and changes nothing.
func TestAgentLink(t *testing.T) {
	for _, mode := range []string{"live", "stopped"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			if mode == "stopped" {
				f.srv.stop()
			}
			const iss = "https://idp.example.com/realms/kfa"
			if out := ok(t, "agent", "list", "--data", f.dir); strings.Contains(out, "ISSUER") {
				t.Fatalf("no agent is linked, yet the list has identity columns:\n%s", out)
			}
			out := ok(t, "agent", "link", f.alice.ID, "--issuer", iss, "--subject", "alice@example.com", "--data", f.dir)
			if want := "Linked agent " + f.alice.ID + " (alice) to subject alice@example.com at " + iss + ".\n"; out != want {
				t.Fatalf("link: %q, want %q", out, want)
			}
			again := decode[api.Agent](t, "agent", "link", "--issuer", iss, "--subject", "alice@example.com", f.alice.ID, "--data", f.dir)
			if again.ID != f.alice.ID || again.Issuer != iss || again.Subject != "alice@example.com" {
				t.Fatalf("the same link again: %+v", again)
			}
			list := decode[api.AgentList](t, "agent", "list", "--data", f.dir)
			for _, a := range list.Agents {
				if linked := a.ID == f.alice.ID; linked != (a.Issuer == iss && a.Subject == "alice@example.com") {
					t.Fatalf("list: %+v", a)
				}
			}
			human := ok(t, "agent", "list", "--data", f.dir)
			if !strings.Contains(human, "ISSUER") || !strings.Contains(human, "SUBJECT") || !strings.Contains(human, iss+"  alice@example.com") {
				t.Fatalf("the list does not show the identity:\n%s", human)
			}
			for _, tc := range []struct {
				name string
				args []string
				code int
				want string
			}{
				{"the identity of another agent", []string{f.bob.ID, "--issuer", iss, "--subject", "alice@example.com"}, 1,
					"is linked to agent " + f.alice.ID + " already"},
				{"a second identity", []string{f.alice.ID, "--issuer", iss, "--subject", "someone-else"}, 1,
					"agent " + f.alice.ID + " is linked to the identity"},
				{"an unknown agent", []string{"01JD0Z6X8Q4Y4K2V1T3S5R7P9N", "--issuer", iss, "--subject", "x"}, 1,
					`no agent with id "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"`},
				{"not an issuer URL", []string{f.bob.ID, "--issuer", "idp.example.com", "--subject", "x"}, 1,
					`the issuer "idp.example.com" is not an absolute http(s) URL`},
				{"no subject", []string{f.bob.ID, "--issuer", iss}, 2, "--issuer and --subject are required"},
				{"no agent", []string{"--issuer", iss, "--subject", "x"}, 2, "want an agent ID"},
			} {
				r := kfa(t, append(append([]string{"agent", "link"}, tc.args...), "--data", f.dir)...)
				if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%s: want exit %d and %q: %s", tc.name, tc.code, tc.want, r)
				}
			}
			for _, a := range decode[api.AgentList](t, "agent", "list", "--data", f.dir).Agents {
				if a.ID != f.alice.ID && a.Issuer != "" {
					t.Fatalf("a refused link changed agent %+v", a)
				}
			}
			if out := ok(t, "check", "--data", f.dir); !strings.HasPrefix(out, "OK: ") {
				t.Errorf("check:\n%s", out)
			}
		})
	}
}

// TestAgentLinkReplace: a revoked agent's identity comes back only through
// kfa agent link --replace, to another agent: rotating the revoked agent,
// or linking its identity without --replace, says what to do; the move
// leaves the revoked agent revoked, without the identity, with a record
// of the move (who, when, to whom); the database checks clean.
func TestAgentLinkReplace(t *testing.T) {
	for _, mode := range []string{"live", "stopped"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			if mode == "stopped" {
				f.srv.stop()
			}
			const iss = "https://idp.example.com/realms/kfa"
			ok(t, "agent", "link", f.alice.ID, "--issuer", iss, "--subject", "alice@example.com", "--data", f.dir)
			ok(t, "agent", "revoke", f.alice.ID, "--data", f.dir)
			for _, tc := range []struct {
				name string
				args []string
				want string
			}{
				{"rotating the revoked agent", []string{"rotate", f.alice.ID}, "kfa agent link NEW_ID --issuer URL --subject SUB --replace"},
				{"linking its identity", []string{"link", f.bob.ID, "--issuer", iss, "--subject", "alice@example.com"},
					"which is revoked; to give it a new agent, link it again with --replace (kfa agent link " + f.bob.ID},
				{"moving it to the revoked agent", []string{"link", f.alice.ID, "--issuer", iss, "--subject", "alice@example.com", "--replace"},
					"agent is revoked, and stays revoked"},
			} {
				r := kfa(t, append(append([]string{"agent"}, tc.args...), "--data", f.dir)...)
				if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%s: want exit 1 and %q: %s", tc.name, tc.want, r)
				}
			}
			out := ok(t, "agent", "link", f.bob.ID, "--issuer", iss, "--subject", "alice@example.com", "--replace", "--by", "ops", "--data", f.dir)
			want := "Linked agent " + f.bob.ID + " (bob) to subject alice@example.com at " + iss + ".\n" +
				"The identity left agent " + f.alice.ID + " (alice), which stays revoked and keeps its tasks.\n"
			if out != want {
				t.Fatalf("replace: %q, want %q", out, want)
			}
			for _, a := range decode[api.AgentList](t, "agent", "list", "--data", f.dir).Agents {
				switch a.ID {
				case f.alice.ID:
					m := a.IdentityMoved
					if a.DisabledAt == "" || a.Issuer != "" || m == nil || m.To != f.bob.ID || m.By != "ops" || m.Issuer != iss ||
						m.Subject != "alice@example.com" || m.At == "" {
						t.Fatalf("the revoked agent: %+v (moved %+v)", a, m)
					}
				case f.bob.ID:
					if a.Issuer != iss || a.Subject != "alice@example.com" || a.DisabledAt != "" {
						t.Fatalf("the new agent: %+v", a)
					}
				}
			}
			carol := decode[api.Agent](t, "agent", "create", "--name", "carol", "--json", "--data", f.dir)
			r := kfa(t, "agent", "link", carol.ID, "--issuer", iss, "--subject", "alice@example.com", "--replace", "--data", f.dir)
			if r.code != 1 || !strings.Contains(r.stderr, "which is active: --replace moves only the identity of a revoked agent") {
				t.Errorf("moving an active agent's identity: %s", r)
			}
			if out := ok(t, "check", "--data", f.dir); !strings.HasPrefix(out, "OK: ") {
				t.Errorf("check:\n%s", out)
			}
		})
	}
}
