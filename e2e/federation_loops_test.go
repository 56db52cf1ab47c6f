package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
)

// hitsTitled counts the hits of a search for q on h titled title.
func hitsTitled(t *testing.T, h *harness, q, title string) int {
	t.Helper()
	n := 0
	for _, hit := range searchHits(t, h, q) {
		if hit.Title == title {
			n++
		}
	}
	return n
}

// TestFederationLoops: A and B follow each other, and C follows both; A
// forwards asks to B. A record written on A, one written on B, and a
// question asked on A and answered on B each appear exactly once on every
// server; C keeps the question's origin (A's discussion) whichever of A
// and B served it; neither A's nor B's feed ever serves a document it
// followed (the only entries of a feed are written on its server, or are
// the question forwarded to it, named with its origin).
func TestFederationLoops(t *testing.T) {
	a, b, c := startPeer(t, nil), startPeer(t, nil), startPeer(t, nil)
	ctx := context.Background()
	addPeer(t, a, b, "b", true)
	addPeer(t, b, a, "a", false)
	addPeer(t, c, a, "a", false)
	addPeer(t, c, b, "b", false)

	if _, err := a.admin.ImportRecords(ctx, strings.NewReader(`{"id":"loop-a","kind":"howto","title":"Herd an axolotl","body":"Slowly, in water."}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.admin.ImportRecords(ctx, strings.NewReader(`{"id":"loop-b","kind":"howto","title":"Herd a bilby","body":"At night, quietly."}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	_, alice := a.agent("alice-loop")
	_, bob := b.agent("bob-loop")
	question := "How do I herd a capybara?"
	tk := a.ask(alice, "loop-ask-1", question)
	disc := discussionOf(t, tk)
	var onB string
	eventually(t, federationWithin, "the ask forwarded to B", func() bool {
		if ids := discussionTitled(t, b, "open", question); len(ids) == 1 {
			onB = ids[0]
		}
		return onB != ""
	})
	if _, err := bob.Reply(ctx, onB, "With patience and melons."); err != nil {
		t.Fatal(err)
	}

	docs := []struct{ q, title, origin string }{
		{"herd axolotl", "Herd an axolotl", a.url + "/records/loop-a"},
		{"herd bilby", "Herd a bilby", b.url + "/records/loop-b"},
		{"herd capybara", question, a.url + "/discussions/" + disc},
	}
	// C holds all three, the question from its origin server.
	eventually(t, 2*federationWithin, "every document on C", func() bool {
		for _, d := range docs {
			var found bool
			for _, h := range searchHits(t, c, d.q) {
				found = found || (h.Title == d.title && h.Origin != nil && h.Origin.URL == d.origin)
			}
			if !found {
				return false
			}
		}
		return true
	})
	eventually(t, federationWithin, "A's record on B and B's on A", func() bool {
		return hitsTitled(t, b, "herd axolotl", "Herd an axolotl") == 1 && hitsTitled(t, a, "herd bilby", "Herd a bilby") == 1
	})
	// Let every follower and forwarder run its passes over what is there
	// now, then count: a loop would have added a copy by now.
	for _, h := range []*harness{a, b, c} {
		caughtUp(t, h, "the followers")
	}
	for _, p := range []struct {
		h    *harness
		name string
	}{{a, "b"}, {b, "a"}, {c, "a"}, {c, "b"}} {
		lagged := peerOf(t, p.h, p.name)
		eventually(t, federationWithin, "a follower's pass", func() bool {
			now := peerOf(t, p.h, p.name)
			return now.LastSync != lagged.LastSync && now.State == "ok"
		})
	}
	for name, h := range map[string]*harness{"A": a, "B": b, "C": c} {
		for _, d := range docs {
			if n := hitsTitled(t, h, d.q, d.title); n != 1 {
				t.Errorf("%s holds %q %d times: %+v", name, d.title, n, searchHits(t, h, d.q))
			}
		}
		if ids := discussionTitled(t, h, "", question); name != "C" && len(ids) != 1 {
			t.Errorf("%s has %d discussions %q", name, len(ids), question)
		}
	}

	// A's feed holds what was written on A, B's what was written on B
	// (and the question forwarded to it, naming its origin).
	check := func(h *harness, own string, allowed map[string]*api.ChangeOrigin) {
		t.Helper()
		chs, _ := readFeed(t, h, "", 100)
		for _, ch := range chs {
			if !strings.HasPrefix(ch.URL, own+"/") {
				t.Errorf("%s's feed serves %s, not its own", own, ch.URL)
			}
			want, ok := allowed[ch.Source+"/"+ch.ID]
			if !ok {
				t.Errorf("%s's feed serves %s/%s (%s)", own, ch.Source, ch.ID, ch.URL)
				continue
			}
			if (want == nil) != (ch.Origin == nil) || (want != nil && *want != *ch.Origin) {
				t.Errorf("%s's feed: %s/%s origin %+v, want %+v", own, ch.Source, ch.ID, ch.Origin, want)
			}
		}
	}
	check(a, a.url, map[string]*api.ChangeOrigin{"record/loop-a": nil, "discussion/" + disc: nil})
	check(b, b.url, map[string]*api.ChangeOrigin{"record/loop-b": nil, "discussion/" + onB: {Server: a.url, ID: disc}})
	check(c, c.url, map[string]*api.ChangeOrigin{})
}
