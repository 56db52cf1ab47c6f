package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/moderation"
)

// TestOnlyAnswerHidden: a spam reply answers a question; three flags
// hide it, and the question is open again on every surface: the API
// (status, answeredAt, replyCount, the status filter and its count), the
// web's lists, search, and a new agent's join, which is no longer
// refused as answered. The asker's task keeps its completion. A
// moderator dismisses the flags: the reply answers the question again, at
// its own time, and the joined task keeps waiting. A revoke with
// --hide-content then hides it for good: open again.
func TestOnlyAnswerHidden(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	_, alice := h.agent("alice")
	spammer, spamC := h.agent("spammer")
	newcomer, _ := h.agent("newcomer")
	var flaggers []api.Agent
	for _, n := range []string{"f1", "f2", "f3"} {
		a, _ := h.agent(n)
		flaggers = append(flaggers, a)
	}
	question := "How do I rotate the quokka signing keys?"
	asked := h.ask(alice, "only-1", question)
	disc := discussionOf(t, asked)
	res, err := spamC.Reply(ctx, disc, "Buy quokka keys at the spam shop.")
	if err != nil {
		t.Fatal(err)
	}
	spam := res.Reply
	caughtUp(t, h, "the answer")
	mustStatus(t, h, disc, question, "answered", spam.CreatedAt, 1)

	for _, f := range flaggers {
		resp, body := h.raw(http.MethodPost, "/api/v1/discussions/"+disc+"/replies/"+spam.ID+":flag",
			map[string]string{"Authorization": "Bearer " + f.Token, "Content-Type": "application/json"}, `{"reason": "spam"}`)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("flag by %s: %d %s", f.Name, resp.StatusCode, body)
		}
	}
	caughtUp(t, h, "the third flag")
	mustStatus(t, h, disc, question, "open", "", 0)

	// A newcomer joins it; the asker's task keeps its completion.
	join := `{"message":{"role":"ROLE_USER","messageId":"join-1","parts":[{"data":{"action":"ask","discussionId":"` + disc +
		`"}}]},"configuration":{"returnImmediately":true}}`
	resp, body := h.raw(http.MethodPost, "/a2a/v1/message:send", a2aHeaders(newcomer.Token), join)
	var joined struct{ Task a2a.Task }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &joined) != nil || joined.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("a join of a question whose only answer is hidden: %d %s", resp.StatusCode, body)
	}
	if got := h.task(alice, asked.ID); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the asker's task after the hide: %s", got.Status.State)
	}

	// The flags were wrong: public again, it answers the question at its
	// own time; the joined task keeps waiting.
	if _, err := h.admin.Moderate(ctx, moderation.ActionDismiss, api.ModerationRequest{ID: spam.ID, By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, h, "the dismissal")
	mustStatus(t, h, disc, question, "answered", spam.CreatedAt, 1)
	newcomerC := h.anon.WithToken(newcomer.Token)
	if got := h.task(newcomerC, joined.Task.ID); got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the joined task after the unhide: %s", got.Status.State)
	}

	// Revoked with its content hidden: open again.
	if _, err := h.admin.RevokeAgent(ctx, spammer.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.admin.HideAgentContent(ctx, spammer.ID, api.HideAuthorRequest{Reason: "spam wave", By: "e2e"}); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, h, "the revoke's hiding")
	mustStatus(t, h, disc, question, "open", "", 0)
}

// mustStatus checks discussion disc (asked as question) on every
// surface: the API's read and lists (by status, with their counts), the
// web's list pages, and search, all saying status, answered at
// answeredAt ("" when open), with replies visible replies.
func mustStatus(t *testing.T, h *harness, disc, question, status, answeredAt string, replies int) {
	t.Helper()
	ctx := context.Background()
	d, err := h.anon.Discussion(ctx, disc)
	if err != nil || d.Status != status || d.AnsweredAt != answeredAt || d.ReplyCount != replies {
		t.Fatalf("the API reads %s at %q with %d replies (%v), want %s at %q with %d", d.Status, d.AnsweredAt, d.ReplyCount, err,
			status, answeredAt, replies)
	}
	other := map[string]string{"open": "answered", "answered": "open"}[status]
	for st, want := range map[string]bool{status: true, other: false} {
		list, err := h.anon.Discussions(ctx, st, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, x := range list.Discussions {
			listed = listed || x.ID == disc
		}
		if listed != want || (want && list.TotalSize != 1) || (!want && list.TotalSize != 0) {
			t.Fatalf("the %s list (%d in all) lists it: %v, want %v", st, list.TotalSize, listed, want)
		}
		resp, page := h.raw(http.MethodGet, "/discussions?status="+st, map[string]string{"Accept": "text/html"}, "")
		if resp.StatusCode != http.StatusOK || strings.Contains(string(page), disc) != want {
			t.Fatalf("the web's %s list (%d) shows it: %v, want %v", st, resp.StatusCode, !want, want)
		}
	}
	found := false
	for _, r := range a2aSearchResults(t, h, question) {
		if r.ID == disc {
			found = true
			if r.Status != status || r.AnsweredAt != answeredAt {
				t.Fatalf("search says %s at %q, want %s at %q", r.Status, r.AnsweredAt, status, answeredAt)
			}
		}
	}
	if !found {
		t.Fatalf("search does not find the %s discussion", status)
	}
}

// searchResult is what a2aSearchResults reads of a result.
type searchResult struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	AnsweredAt string `json:"answeredAt"`
}

// a2aSearchResults is an anonymous A2A search for q.
func a2aSearchResults(t *testing.T, h *harness, q string) []searchResult {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"action": "search", "query": q, "limit": 5})
	res, err := h.anon.SendMessage(context.Background(), dataMessage(b))
	if err != nil || res.Message == nil {
		t.Fatalf("A2A search %s: %v", b, err)
	}
	var out struct{ Results []searchResult }
	for _, p := range res.Message.Parts {
		if p.Data != nil {
			if err := json.Unmarshal(p.Data, &out); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.Results
}
