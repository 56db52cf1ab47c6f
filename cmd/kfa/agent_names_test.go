package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
)

// TestAgentDuplicateName: a name another agent has, in any case, is
// refused with a message that names that agent and the flag, and writes
// nothing; --allow-duplicate-name creates the agent; then the listings
// tell the two apart by the end of their ids.
func TestAgentDuplicateName(t *testing.T) {
	f := newFixture(t)
	r := kfa(t, "agent", "create", "--data", f.dir, "--name", "ALICE")
	if r.code != 1 || !strings.Contains(r.stderr, f.alice.ID) || !strings.Contains(r.stderr, "--allow-duplicate-name") || r.stdout != "" {
		t.Fatalf("a duplicate name: %s", r)
	}
	before := decode[api.AgentList](t, "agent", "list", "--data", f.dir, "--json")
	twin := decode[api.Agent](t, "agent", "create", "--data", f.dir, "--name", "alice", "--allow-duplicate-name")
	if twin.ID == f.alice.ID || twin.Name != "alice" {
		t.Fatalf("the allowed duplicate: %+v", twin)
	}
	if after := decode[api.AgentList](t, "agent", "list", "--data", f.dir, "--json"); after.TotalSize != before.TotalSize+1 {
		t.Fatalf("agents: %d, then %d", before.TotalSize, after.TotalSize)
	}
	tc := client.New(f.srv.url, client.WithToken(twin.Token))
	if _, err := tc.SendMessage(context.Background(), askReq("twin-1", "ctx-t", "Which alice am I?")); err != nil {
		t.Fatal(err)
	}
	out := ok(t, "tasks", "list", "--data", f.dir)
	for _, want := range []string{"alice (…" + f.alice.ID[len(f.alice.ID)-6:] + ")", "alice (…" + twin.ID[len(twin.ID)-6:] + ")", " bob "} {
		if !strings.Contains(out, want) {
			t.Errorf("tasks list lacks %q:\n%s", want, out)
		}
	}
	out = ok(t, "discussions", "list", "--data", f.dir)
	if !strings.Contains(out, "alice (…"+twin.ID[len(twin.ID)-6:]+")") {
		t.Errorf("discussions list does not tell the alices apart:\n%s", out)
	}
}
