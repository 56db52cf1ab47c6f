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
