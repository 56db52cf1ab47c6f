package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/moderation"
)

// TestModerationAPI drives POST :flag and :accept over /api/v1: every bad
// input gets its clear status and writes nothing; a flag counts once per
// agent; three agents' flags hide a reply from the API's pages and
// counts; only the asker accepts, and another accepted reply moves the
// mark.
func TestModerationAPI(t *testing.T) {
	h := start(t, nil)
	alice, aliceC := h.agent("alice")
	bob, bobC := h.agent("bob")
	carol, _ := h.agent("carol")
	dave, _ := h.agent("dave")
	eve, _ := h.agent("eve")
	reader, _ := h.agent("reader", "read")

	disc := discussionOf(t, h.ask(aliceC, "mod-api-1", "How do I rotate a kestrel key?"))
	other := discussionOf(t, h.ask(aliceC, "mod-api-2", "How do I prune kestrel snapshots?"))
	r1, err := bobC.Reply(bg(), disc, "Run kestrel rotate with the --all flag.")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := bobC.Reply(bg(), disc, "Or rotate each key by hand.")
	if err != nil {
		t.Fatal(err)
	}
	rOther, err := bobC.Reply(bg(), other, "kestrel prune --older-than 7d.")
	if err != nil {
		t.Fatal(err)
	}
	reply1, reply2, replyOther := r1.Reply.ID, r2.Reply.ID, rOther.Reply.ID
	hdr := func(tok string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		if tok != "" {
			m["Authorization"] = "Bearer " + tok
		}
		return m
	}
	flagPath := "/api/v1/discussions/" + disc + "/replies/" + reply1 + ":flag"

	// Bad input: a clear status, and the store exactly as it was.
	for _, tc := range []struct {
		name, token, path, body string
		status                  int
		reason                  string // of a 403: only a missing scope is INSUFFICIENT_SCOPE
	}{
		{"an unknown reason", carol.Token, flagPath, `{"reason": "rude"}`, http.StatusBadRequest, ""},
		{"no reason", carol.Token, flagPath, `{"note": "bad"}`, http.StatusBadRequest, ""},
		{"a note over its limit", carol.Token, flagPath,
			`{"reason": "spam", "note": "` + strings.Repeat("n", moderation.MaxNoteLen+1) + `"}`, http.StatusBadRequest, ""},
		{"an unknown field", carol.Token, flagPath, `{"reason": "spam", "why": "x"}`, http.StatusBadRequest, ""},
		{"no credential", "", flagPath, `{"reason": "spam"}`, http.StatusUnauthorized, ""},
		{"the read scope only", reader.Token, flagPath, `{"reason": "spam"}`, http.StatusForbidden, "INSUFFICIENT_SCOPE"},
		{"one's own reply", bob.Token, flagPath, `{"reason": "spam"}`, http.StatusForbidden, "OWN_CONTENT"},
		{"one's own discussion", alice.Token, "/api/v1/discussions/" + disc + ":flag", `{"reason": "spam"}`, http.StatusForbidden, "OWN_CONTENT"},
		{"an unknown discussion", carol.Token, "/api/v1/discussions/01JD0Z6X8Q4Y4K2V1T3S5R7P9N:flag", `{"reason": "spam"}`, http.StatusNotFound, ""},
		{"an unknown reply", carol.Token, "/api/v1/discussions/" + disc + "/replies/01JD0Z6X8Q4Y4K2V1T3S5R7P9N:flag", `{"reason": "spam"}`, http.StatusNotFound, ""},
		{"a reply of another discussion", carol.Token, "/api/v1/discussions/" + disc + "/replies/" + replyOther + ":flag", `{"reason": "spam"}`, http.StatusNotFound, ""},
		{"accepting as someone else", carol.Token, "/api/v1/discussions/" + disc + "/replies/" + reply1 + ":accept", "", http.StatusForbidden, "NOT_ASKER"},
		{"accepting a reply of another discussion", alice.Token, "/api/v1/discussions/" + disc + "/replies/" + replyOther + ":accept", "", http.StatusNotFound, ""},
		{"accepting an unknown reply", alice.Token, "/api/v1/discussions/" + disc + "/replies/01JD0Z6X8Q4Y4K2V1T3S5R7P9N:accept", "", http.StatusNotFound, ""},
		{"accepting on an unknown discussion", alice.Token, "/api/v1/discussions/01JD0Z6X8Q4Y4K2V1T3S5R7P9N/replies/" + reply1 + ":accept", "", http.StatusNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.digest()
			resp, body := h.raw(http.MethodPost, tc.path, hdr(tc.token), tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
				t.Fatalf("no error message: %s", body)
			}
			if tc.reason != "" {
				challenge := resp.Header.Get("WWW-Authenticate")
				if got := reason(body); got != tc.reason || strings.Contains(challenge, "insufficient_scope") != (tc.reason == "INSUFFICIENT_SCOPE") {
					t.Fatalf("reason %s, challenge %q; want %s, and insufficient_scope only for a missing scope: %s", got, challenge, tc.reason, body)
				}
			}
			if h.digest() != before {
				t.Fatalf("a refused request (%s) changed the store", e.Error.Message)
			}
		})
	}

	// A flag counts once per agent: again is 200 alreadyFlagged, and
	// writes nothing.
	flag := func(tok, path string) (int, api.FlagResponse) {
		t.Helper()
		resp, body := h.raw(http.MethodPost, path, hdr(tok), `{"reason": "wrong", "note": "the flag is --every"}`)
		var out api.FlagResponse
		if resp.StatusCode < 300 {
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, out
	}
	if st, out := flag(carol.Token, flagPath); st != http.StatusCreated || out.AlreadyFlagged || out.ItemID != reply1 || out.ItemKind != "reply" {
		t.Fatalf("first flag: %d %+v", st, out)
	}
	before := h.digest()
	if st, out := flag(carol.Token, flagPath); st != http.StatusOK || !out.AlreadyFlagged {
		t.Fatalf("second flag: %d %+v", st, out)
	}
	if h.digest() != before {
		t.Fatal("flagging again changed the store")
	}

	// The asker accepts reply 1, then moves the mark to reply 2.
	for _, want := range []string{reply1, reply2} {
		res, err := aliceC.Accept(bg(), disc, want)
		if err != nil || res.AcceptedReplyID != want || !res.Changed {
			t.Fatalf("accept %s: %+v %v", want, res, err)
		}
		d, err := h.anon.Discussion(bg(), disc)
		if err != nil || d.AcceptedReplyID != want {
			t.Fatalf("the discussion's acceptedReplyId: %q (%v), want %s", d.AcceptedReplyID, err, want)
		}
	}
	if _, err := aliceC.Accept(bg(), disc, reply1); err != nil {
		t.Fatal(err)
	}

	// Two more agents: the third flag hides reply 1, which leaves the
	// page and the count, and loses its accepted mark.
	for _, a := range []api.Agent{dave, eve} {
		if st, out := flag(a.Token, flagPath); st != http.StatusCreated || out.AlreadyFlagged {
			t.Fatalf("flag by %s: %d %+v", a.Name, st, out)
		}
	}
	d, err := h.anon.Discussion(bg(), disc)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Replies {
		if r.ID == reply1 {
			t.Fatal("a reply hidden by three flags is still on the discussion's page")
		}
	}
	if d.ReplyCount != 1 || len(d.Replies) != 1 {
		t.Fatalf("replyCount %d, %d replies: the hidden one is counted", d.ReplyCount, len(d.Replies))
	}
	if d.AcceptedReplyID == reply1 {
		t.Fatal("a hidden reply keeps the accepted mark on the public discussion")
	}
	// A hidden item cannot be flagged (404, like an unknown one), and the
	// task its reply completed keeps its state and artifact.
	before = h.digest()
	if st, _ := flag(carol.Token, "/api/v1/discussions/"+disc+"/replies/"+reply1+":flag"); st != http.StatusNotFound {
		t.Fatalf("flagging a hidden reply: %d, want 404", st)
	}
	if h.digest() != before {
		t.Fatal("flagging a hidden reply changed the store")
	}
	q, err := h.admin.ModerationQueue(bg(), 0)
	if err != nil || len(q.Items) != 1 || q.Items[0].ID != reply1 || q.Items[0].FlagCount != 3 || q.Items[0].HiddenBy != "flags" {
		t.Fatalf("the queue after three flags: %+v %v", q, err)
	}

	// A hidden discussion answers 404, like an unknown one.
	if _, err := h.admin.Moderate(bg(), moderation.ActionHide, api.ModerationRequest{ID: other, Reason: "spam wave", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	resp, body := h.raw(http.MethodGet, "/api/v1/discussions/"+other, nil, "")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a hidden discussion: %d %s", resp.StatusCode, body)
	}
	list, err := h.anon.Discussions(bg(), "", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list.Discussions {
		if x.ID == other {
			t.Fatal("a hidden discussion is listed")
		}
	}
	// Joining it is 404 too, word for word what joining an unknown
	// discussion answers (moderation.md), and writes nothing.
	join := func(id string) (int, string) {
		body := `{"message":{"role":"ROLE_USER","messageId":"join-` + id + `","parts":[{"data":{"action":"ask","discussionId":"` + id +
			`"}}]},"configuration":{"returnImmediately":true}}`
		resp, b := h.raw(http.MethodPost, "/a2a/v1/message:send", a2aHeaders(carol.Token), body)
		return resp.StatusCode, string(b)
	}
	before = h.digest()
	const unknown = "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
	stHidden, bHidden := join(other)
	stUnknown, bUnknown := join(unknown)
	if stHidden != http.StatusNotFound || !strings.Contains(bHidden, `"NOT_FOUND"`) {
		t.Fatalf("joining a hidden discussion: %d %s, want 404 NOT_FOUND", stHidden, bHidden)
	}
	if stUnknown != stHidden || strings.ReplaceAll(bUnknown, unknown, other) != bHidden {
		t.Fatalf("joining a hidden discussion and an unknown one differ:\n%d %s\n%d %s", stHidden, bHidden, stUnknown, bUnknown)
	}
	if h.digest() != before {
		t.Fatal("a refused join changed the store")
	}
}
