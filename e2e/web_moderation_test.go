package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/moderation"
)

// TestWebModeration: a person signed in with the moderate scope hides a
// reply from the discussion's page (a form with CSRF), and it is gone
// from the page, search and MCP for everyone else; the queue at
// /moderation lists flagged items for moderators only; a hidden
// discussion answers 410 with a notice and leaves the Atom feed; forms
// without their token or from agents without the scope change nothing.
func TestWebModeration(t *testing.T) {
	f := newWebFixture(t, func(c *serverConfig) { c.SearchRate = 0 })
	h := f.h
	mod, _ := h.agent("mia", "read", "moderate")
	_, carolC := h.agent("carol")
	d, err := h.anon.Discussion(bg(), f.answered)
	if err != nil || len(d.Replies) != 1 {
		t.Fatalf("the answered discussion: %+v %v", d, err)
	}
	replyID := d.Replies[0].ID
	const answer = "Use Tx.WriteTo inside a read transaction."

	anon := h.browser()
	anon.get("/discussions/"+f.answered).mustContain(t, answer)
	anon.get("/discussions/"+f.answered).mustNotContain(t, `action="/discussions/`+f.answered+`/moderation"`)

	// The queue: sign in first, then the scope.
	if p := anon.get("/moderation"); p.status != http.StatusUnauthorized {
		t.Fatalf("/moderation signed out: %d", p.status)
	}
	bobB := h.browser()
	bobB.signIn(f.bob.Token, "/")
	if p := bobB.get("/moderation"); p.status != http.StatusForbidden {
		t.Fatalf("/moderation without the moderate scope: %d", p.status)
	}
	bobB.get("/").mustNotContain(t, `href="/moderation"`)

	// A flag puts the reply in the queue the moderator reads.
	if _, err := carolC.Flag(bg(), f.answered, replyID, "wrong", "WriteTo needs a read tx, not a write tx"); err != nil {
		t.Fatal(err)
	}
	mb := h.browser()
	mb.signIn(mod.Token, "/moderation")
	q := mb.get("/moderation")
	if q.status != http.StatusOK {
		t.Fatalf("/moderation as a moderator: %d\n%s", q.status, q.body)
	}
	q.mustContain(t, "1 item waits", "How do I take a hot backup", answer, "WriteTo needs a read tx", `href="/moderation" aria-current="page"`,
		`<a class="author" href="/agents/`+f.bob.ID+`">bob</a>`) // the flagged reply's author links to his profile
	q.mustLabelControls(t, "the moderation queue")

	// Refused forms write nothing: no token, a stale token, no scope.
	page := mb.get("/discussions/" + f.answered)
	page.mustContain(t, `name="item" value="`+replyID+`"`, ">Hide</button>")
	page.mustLabelControls(t, "a discussion a moderator reads")
	csrf := page.csrf(t)
	form := url.Values{"action": {"hide"}, "kind": {"reply"}, "item": {replyID}, "reason": {"wrong and unsafe"}}
	for _, tc := range []struct {
		name   string
		b      *browser
		token  string
		status int
	}{
		{"no token", mb, "", http.StatusForbidden},
		{"a stale token", mb, "bogus", http.StatusForbidden},
		{"signed out", anon, "", http.StatusUnauthorized},
		{"without the moderate scope", bobB, bobB.get("/discussions/" + f.answered).csrf(t), http.StatusForbidden},
	} {
		before := h.digest()
		fv := url.Values{}
		for k, v := range form {
			fv[k] = v
		}
		if tc.token != "" {
			fv.Set("csrf", tc.token)
		}
		if p := tc.b.post("/discussions/"+f.answered+"/moderation", fv); p.status != tc.status {
			t.Fatalf("%s: %d, want %d\n%s", tc.name, p.status, tc.status, p.body)
		}
		if h.digest() != before {
			t.Fatalf("a refused moderation form (%s) changed the store", tc.name)
		}
	}
	// A hide without a reason is refused too.
	if p := mb.post("/discussions/"+f.answered+"/moderation", url.Values{"csrf": {csrf}, "action": {"hide"}, "kind": {"reply"},
		"item": {replyID}}); p.status != http.StatusBadRequest {
		t.Fatalf("a hide without a reason: %d", p.status)
	}

	cs := mcpSession(t, h, "")
	mcpFinds := func(id string) bool {
		var out mcpserver.SearchOutput
		mcpOut(t, mcpCall(t, cs, "search", map[string]any{"query": "inside a read transaction"}), &out)
		for _, r := range out.Results {
			if r.ID == id {
				return true
			}
		}
		return false
	}
	mcpText := func() string {
		var out mcpserver.FetchOutput
		mcpOut(t, mcpCall(t, cs, "fetch", map[string]any{"id": f.answered}), &out)
		return out.Text
	}
	caughtUp(t, h, "the fixture")
	if !mcpFinds(f.answered) || !strings.Contains(mcpText(), answer) || !searchFinds(t, h, "inside a read transaction", f.answered) {
		t.Fatalf("before the hide, search (%v) and MCP (search %v, fetch %q) do not have the answer",
			searchFinds(t, h, "inside a read transaction", f.answered), mcpFinds(f.answered), mcpText())
	}

	// The moderator hides the reply from the page.
	form.Set("csrf", csrf)
	p := mb.post("/discussions/"+f.answered+"/moderation", form)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/discussions/"+f.answered+"#reply-"+replyID {
		t.Fatalf("hide: %d to %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	caughtUp(t, h, "a hide")
	anon.get("/discussions/"+f.answered).mustNotContain(t, answer)
	mb.get("/discussions/"+f.answered).mustContain(t, answer, `class="hidden-reply"`, ">Unhide</button>")
	if strings.Contains(mcpText(), answer) {
		t.Fatal("MCP fetch still shows the hidden reply")
	}
	if searchFinds(t, h, "inside a read transaction", f.answered) || mcpFinds(f.answered) {
		t.Fatal("A2A or MCP search still matches the hidden reply's words")
	}
	log, err := h.admin.ModerationLog(bg(), 0, "")
	if err != nil || len(log.Entries) == 0 || log.Entries[0].Action != "hide" || log.Entries[0].Actor.ID != mod.ID ||
		log.Entries[0].Reason != "wrong and unsafe" {
		t.Fatalf("the log after a hide from the page: %+v %v", log, err)
	}

	// A hidden discussion: 410 with a notice, out of the lists and the
	// feed; the moderator still reads it, marked.
	if _, err := h.admin.Moderate(bg(), moderation.ActionHide, api.ModerationRequest{ID: f.open, Reason: "spam", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, h, "a hidden discussion")
	gone := anon.get("/discussions/" + f.open)
	if gone.status != http.StatusGone {
		t.Fatalf("a hidden discussion's page: %d", gone.status)
	}
	gone.mustContain(t, "This discussion was removed")
	gone.mustNotContain(t, "Why does bbolt Open hang")
	anon.get("/discussions").mustNotContain(t, f.open)
	anon.get("/").mustNotContain(t, f.open, "Why does bbolt Open hang")
	anon.get("/search?q=bbolt+Open+hang+two+processes").mustNotContain(t, f.open)
	anon.get("/discussions.atom").mustNotContain(t, f.open)
	anon.get("/discussions.atom?status=open").mustNotContain(t, f.open)
	mb.get("/discussions/"+f.open).mustContain(t, "Why does bbolt Open hang", `<span class="badge hidden">Hidden</span>`)
	// Unhiding restores it.
	if _, err := h.admin.Moderate(bg(), moderation.ActionUnhide, api.ModerationRequest{ID: f.open, Reason: "not spam", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	anon.get("/discussions/"+f.open).mustContain(t, "Why does bbolt Open hang")
	anon.get("/").mustContain(t, f.open)
	anon.get("/discussions.atom").mustContain(t, f.open)
}

// TestWebAcceptedRecordsAndOrder: the accepted reply comes first on the
// page, marked; /records browses by kind and product, paged; the open
// questions can be listed by how long they have waited.
func TestWebAcceptedRecordsAndOrder(t *testing.T) {
	f := newWebFixture(t, nil)
	h := f.h
	_, carolC := h.agent("carol")
	late, err := carolC.Reply(bg(), f.answered, "A later reply: copy the file while no writer runs.")
	if err != nil {
		t.Fatal(err)
	}
	aliceClient := client.New(h.url, client.WithToken(f.alice.Token))
	if _, err := aliceClient.Accept(bg(), f.answered, late.Reply.ID); err != nil {
		t.Fatal(err)
	}
	b := h.browser()
	p := b.get("/discussions/" + f.answered)
	p.mustContain(t, "Accepted answer")
	first := strings.Index(p.body, "A later reply: copy the file")
	second := strings.Index(p.body, "Use Tx.WriteTo inside")
	if first < 0 || second < 0 || first > second {
		t.Fatalf("the accepted reply is not first on the page (at %d, the other at %d)", first, second)
	}
	if !regexp.MustCompile(`<li id="reply-` + late.Reply.ID + `" class="accepted">`).MatchString(p.body) {
		t.Fatal("the accepted reply is not marked")
	}
	b.get("/discussions").mustContain(t, `class="stat answered accepted"`)

	f.importRecords(
		`{"id":"pg-vacuum","kind":"howto","product":"postgresql","title":"Vacuum a bloated table","body":"VACUUM (VERBOSE) t;"}`,
		`{"id":"pg-locks","kind":"fix","product":"postgresql","title":"Find the lock a query waits on","body":"Query pg_locks."}`,
	)
	caughtUp(t, h, "an import")
	b.get("/records").mustContain(t, "3 records", "/records/bbolt-timeout", "/records/pg-vacuum", "/records/pg-locks",
		`href="/records?kind=fix"`, `href="/records?product=postgresql"`)
	fixes := b.get("/records?kind=fix")
	fixes.mustContain(t, "2 records", "/records/bbolt-timeout", "/records/pg-locks")
	fixes.mustNotContain(t, "/records/pg-vacuum")
	b.get("/records?kind=fix&product=postgresql").mustContain(t, "1 record,", "/records/pg-locks")
	if p := b.get("/records?pageToken=bogus"); p.status != http.StatusBadRequest {
		t.Fatalf("a bad page token: %d", p.status)
	}

	// Open questions by how long they have waited: the older first.
	newer := discussionOf(t, h.ask(carolC, "web-3", "Why does a bbolt file grow after deletes?"))
	newest := b.get("/discussions?status=open")
	oldest := b.get("/discussions?status=open&sort=oldest")
	oldest.mustContain(t, "oldest first", `aria-current="page">Waited longest`)
	if strings.Index(newest.body, newer) > strings.Index(newest.body, f.open) {
		t.Fatal("newest first lists the older question first")
	}
	if strings.Index(oldest.body, newer) < strings.Index(oldest.body, f.open) {
		t.Fatal("sort=oldest lists the newer question first")
	}
}
