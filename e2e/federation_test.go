package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/moderation"
)

// hitOf is the hit of title among hits (nil for none).
func hitOf(hits []searchHit, title string) *searchHit {
	for i := range hits {
		if hits[i].Title == title {
			return &hits[i]
		}
	}
	return nil
}

// TestFederationFollow: A follows B. A record imported on B is found by
// a search on A within 5 s, with its origin (a local hit has none); an
// answered discussion too; what B deletes or hides is gone from A within
// 5 s, what B edits is changed; peer list says so; kfa peer remove
// --purge on A removes the rest at once.
func TestFederationFollow(t *testing.T) {
	a, b := startPeer(t, nil), startPeer(t, nil)
	ctx := context.Background()
	if _, err := a.admin.ImportRecords(ctx, strings.NewReader(`{"id":"local-1","kind":"howto","title":"Wrangle a local pangolin","body":"Gently, locally."}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	addPeer(t, a, b, "b", false)

	if _, err := b.admin.ImportRecords(ctx, strings.NewReader(`{"id":"fed-b-1","kind":"howto","title":"Wrangle a pangolin","body":"Gently, with gloves."}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			l, _ := a.admin.Peers(ctx)
			t.Logf("A's peers: %+v", l)
			st, _ := a.admin.Stats(ctx)
			t.Logf("A's stats: %+v", st)
			t.Logf("A's hits: %+v", searchHits(t, a, "wrangle pangolin"))
			t.Logf("A's hits: %+v", searchHits(t, a, "pangolin"))
		}
	}()
	took := eventually(t, federationWithin, "B's record found on A", func() bool {
		return hitOf(searchHits(t, a, "wrangle pangolin"), "Wrangle a pangolin") != nil
	})
	t.Logf("B's record was found on A %s after its import", took)
	hits := searchHits(t, a, "wrangle pangolin")
	h, local := hitOf(hits, "Wrangle a pangolin"), hitOf(hits, "Wrangle a local pangolin")
	if h.Origin == nil || h.Origin.Peer != "b" || h.Origin.URL != b.url+"/records/fed-b-1" || h.PageURL != h.Origin.URL {
		t.Fatalf("a hit from B: %+v", h)
	}
	if local == nil || local.Origin != nil {
		t.Fatalf("a local hit: %+v", local)
	}

	// MCP: search and fetch carry the origin; the fetch is the peer's text.
	cs := mcpSession(t, a, "")
	var mh *mcpserver.SearchResult
	for _, r := range mcpSearch(t, cs, map[string]any{"query": "wrangle pangolin"}) {
		if r.ID == h.ID {
			mh = &r
		}
	}
	if mh == nil || mh.Origin == nil || mh.Origin.Peer != "b" || mh.URL != h.Origin.URL {
		t.Fatalf("an MCP search hit from B: %+v", mh)
	}
	var doc mcpserver.FetchOutput
	mcpOut(t, mcpCall(t, cs, "fetch", map[string]any{"id": h.ID}), &doc)
	if doc.Text != "Gently, with gloves." || doc.Metadata.Origin == nil || doc.Metadata.Origin.Peer != "b" || doc.URL != h.Origin.URL {
		t.Fatalf("MCP fetch of a document from B: %+v", doc)
	}

	// The web: "from b", with the link.
	_, page := a.raw(http.MethodGet, "/search?q=wrangle+pangolin", map[string]string{"Accept": "text/html"}, "")
	if !strings.Contains(string(page), `from <a href="`+h.Origin.URL+`" rel="nofollow noopener">b</a>`) {
		t.Fatalf("the web's search page does not say where the hit is from:\n%s", page)
	}

	// Hidden here by A's moderators: out of A's search whatever B sends,
	// until it is unhidden.
	if _, err := a.admin.Moderate(ctx, moderation.ActionHide, api.ModerationRequest{ID: h.ID, Reason: "off topic here", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, a, "a followed record hidden on A")
	if hitOf(searchHits(t, a, "wrangle pangolin"), "Wrangle a pangolin") != nil {
		t.Fatal("a followed record hidden on A is still found there")
	}
	if _, err := a.admin.Moderate(ctx, moderation.ActionUnhide, api.ModerationRequest{ID: h.ID, Reason: "fine after all", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, a, "a followed record shown again on A")
	if hitOf(searchHits(t, a, "wrangle pangolin"), "Wrangle a pangolin") == nil {
		t.Fatal("a followed record unhidden on A is not found")
	}

	// An answered discussion on B.
	_, alice := b.agent("alice-b")
	_, bob := b.agent("bob-b")
	disc := discussionOf(t, b.ask(alice, "fed-ask-1", "How do I feed a quokka?"))
	if _, err := bob.Reply(ctx, disc, "Leaves and grasses, never bread."); err != nil {
		t.Fatal(err)
	}
	eventually(t, federationWithin, "B's answered discussion found on A", func() bool {
		h := hitOf(searchHits(t, a, "feed quokka"), "How do I feed a quokka?")
		return h != nil && h.Origin != nil && h.Source == "discussion"
	})

	// Edited, deleted and hidden on B: changed and gone on A.
	if _, err := b.admin.ImportRecords(ctx, strings.NewReader(`{"id":"fed-b-1","kind":"howto","title":"Wrangle a pangolin with care","body":"Gently, with gloves."}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	eventually(t, federationWithin, "B's edit on A", func() bool {
		return hitOf(searchHits(t, a, "wrangle pangolin"), "Wrangle a pangolin with care") != nil
	})
	if _, err := b.admin.DeleteRecord(ctx, "fed-b-1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, federationWithin, "B's deleted record gone from A", func() bool {
		return hitOf(searchHits(t, a, "wrangle pangolin"), "Wrangle a pangolin with care") == nil
	})
	if _, err := b.admin.Moderate(ctx, moderation.ActionHide, api.ModerationRequest{ID: disc, Reason: "test", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, federationWithin, "B's hidden discussion gone from A", func() bool {
		return hitOf(searchHits(t, a, "feed quokka"), "How do I feed a quokka?") == nil
	})

	p := peerOf(t, a, "b")
	if p.State != "ok" || p.LastSync == "" || p.Follow != true || p.Server != b.url {
		t.Fatalf("peer b on A: %+v", p)
	}

	// Purged: gone at once.
	if _, err := b.admin.ImportRecords(ctx, strings.NewReader(`{"id":"fed-b-2","kind":"howto","title":"Shear an alpaca","body":"In spring."}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	eventually(t, federationWithin, "B's second record on A", func() bool {
		return hitOf(searchHits(t, a, "shear alpaca"), "Shear an alpaca") != nil
	})
	if err := a.admin.RemovePeer(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, a, "the purge")
	if h := hitOf(searchHits(t, a, "shear alpaca"), "Shear an alpaca"); h != nil {
		t.Fatalf("a purged peer's record is still found: %+v", h)
	}
}

// discussionTitled is the discussion of h titled title, in status
// (open, answered, ""), or "".
func discussionTitled(t *testing.T, h *harness, status, title string) []string {
	t.Helper()
	l, err := h.anon.Discussions(context.Background(), status, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range l.Discussions {
		if d.Title == title {
			out = append(out, d.ID)
		}
	}
	return out
}

// TestFederationForward: A forwards asks to B, and B to A. An ask on A is
// asked on B (once: the question that came from A is never forwarded
// back); an agent of B answers it, and A's task completes within 5 s with
// the remote author and its origin; a later reply on B comes back through
// B's feed; an ask with "forward": false stays on A; cancelling on A
// cancels nothing on B.
func TestFederationForward(t *testing.T) {
	a, b := startPeer(t, nil), startPeer(t, nil)
	ctx := context.Background()
	addPeer(t, a, b, "b", true)
	addPeer(t, b, a, "a", true)
	_, alice := a.agent("alice-fwd")
	_, bob := b.agent("bob-fwd")
	_, carol := b.agent("carol-fwd")

	question := "How do I calibrate a flux capacitor?"
	tk := a.ask(alice, "fwd-e2e-1", question)
	disc := discussionOf(t, tk)
	var onB string
	eventually(t, federationWithin, "the ask forwarded to B", func() bool {
		ids := discussionTitled(t, b, "open", question)
		if len(ids) > 1 {
			t.Fatalf("asked %d times on B", len(ids))
		}
		if len(ids) == 1 {
			onB = ids[0]
		}
		return onB != ""
	})
	if _, err := bob.Reply(ctx, onB, "Set it to 1.21 gigawatts."); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, federationWithin, "A's task completed by B's answer", func() bool {
		got, err := alice.GetTask(ctx, tk.ID, nil)
		return err == nil && got.Status.State == a2a.TaskStateCompleted
	})
	t.Logf("A's task completed %s after the reply on B", took)
	got, _ := alice.GetTask(ctx, tk.ID, nil)
	var ref struct {
		AuthorName string `json:"authorName"`
		Origin     struct {
			Peer string `json:"peer"`
			URL  string `json:"url"`
		} `json:"origin"`
	}
	if len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) != 2 || json.Unmarshal(got.Artifacts[0].Parts[1].Data, &ref) != nil ||
		ref.AuthorName != "bob-fwd@b" || ref.Origin.Peer != "b" || !strings.HasPrefix(ref.Origin.URL, b.url+"/discussions/"+onB) ||
		*got.Artifacts[0].Parts[0].Text != "Set it to 1.21 gigawatts." {
		t.Fatalf("the answer's artifact: %+v (%+v)", got.Artifacts, ref)
	}

	// A later reply on B comes back through B's feed.
	if _, err := carol.Reply(ctx, onB, "And mind the plutonium."); err != nil {
		t.Fatal(err)
	}
	eventually(t, federationWithin, "B's later reply on A", func() bool {
		d, err := a.anon.Discussion(ctx, disc)
		return err == nil && len(d.Replies) == 2
	})
	d, _ := a.anon.Discussion(ctx, disc)
	if d.Replies[1].AuthorName != "carol-fwd@b" {
		t.Fatalf("replies on A: %+v", d.Replies)
	}
	// Never forwarded back: A holds its own question once.
	caughtUp(t, b, "B's forwarder")
	if ids := discussionTitled(t, a, "", question); len(ids) != 1 {
		t.Fatalf("A holds its question %d times", len(ids))
	}

	// Opted out: never asked on B.
	private := "Where did I park the DeLorean?"
	req := askReq("fwd-e2e-2", private, map[string]any{"forward": false})
	if _, err := alice.SendMessage(ctx, req); err != nil {
		t.Fatal(err)
	}
	// Cancelled on A: nothing is cancelled on B.
	third := "What year is it in Hill Valley?"
	tk3 := a.ask(alice, "fwd-e2e-3", third)
	eventually(t, federationWithin, "the third ask forwarded to B", func() bool { return len(discussionTitled(t, b, "open", third)) == 1 })
	if _, err := alice.CancelTask(ctx, tk3.ID); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, a, "A's forwarder")
	if ids := discussionTitled(t, b, "", private); len(ids) != 0 {
		t.Fatalf("an ask with forward false reached B: %v", ids)
	}
	bAgent := peerOf(t, a, "b")
	if bAgent.State != "ok" || !bAgent.ForwardAsks {
		t.Fatalf("peer b on A: %+v", bAgent)
	}
	tasksOnB, err := b.admin.AdminTasks(ctx, client.TaskQuery{State: "TASK_STATE_CANCELED"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasksOnB.Tasks) != 0 {
		t.Fatalf("cancelling on A cancelled %d tasks on B", len(tasksOnB.Tasks))
	}
}
