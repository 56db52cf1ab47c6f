package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/client"
)

// TestAskBudgetSurvivesRestart: the ask rate is kept in the file, so a
// restarted server does not hand an agent a fresh budget.
func TestAskBudgetSurvivesRestart(t *testing.T) {
	h := start(t, func(c *serverConfig) { c.AskRate = 2 })
	alice, ac := h.agent("alice")
	h.ask(ac, "m1", "first")
	h.ask(ac, "m2", "second")
	cfg := h.cfg
	h.stop()

	h2 := startWith(t, cfg)
	_, err := h2.anon.WithToken(alice.Token).SendMessage(bg(), askReq("m3", "third, after a restart", nil))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 429 || ce.RetryAfter == "" {
		t.Fatalf("third ask within the minute, after a restart: %v", err)
	}
}

// TestReplyLimits: replies past the per-agent rate get 429 with
// Retry-After; past the per-discussion bound, a clear refusal; neither
// changes anything.
func TestReplyLimits(t *testing.T) {
	h := start(t, func(c *serverConfig) { c.ReplyRate, c.MaxReplies = 2, 3 })
	_, ac := h.agent("alice")
	_, bc := h.agent("bob")
	_, cc := h.agent("carol")
	disc := discussionOf(t, h.ask(ac, "m1", "How do I rotate a token?"))
	for i := range 2 {
		if _, err := bc.Reply(bg(), disc, fmt.Sprint("answer ", i)); err != nil {
			t.Fatal(err)
		}
	}
	before := h.digest()
	_, err := bc.Reply(bg(), disc, "a third within the minute")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 429 || ce.RetryAfter == "" || !strings.Contains(ce.Message, "2 per minute") {
		t.Fatalf("reply over the rate: %v", err)
	}
	if h.digest() != before {
		t.Fatal("a refused reply changed the store")
	}
	if _, err := cc.Reply(bg(), disc, "carol's"); err != nil {
		t.Fatal(err)
	}
	before = h.digest()
	_, err = cc.Reply(bg(), disc, "one past the bound")
	if !errors.As(err, &ce) || ce.StatusCode != 400 || ce.Reason != "UNSUPPORTED_OPERATION" ||
		!strings.Contains(ce.Message, "holds 3 replies") {
		t.Fatalf("reply past the bound: %v", err)
	}
	if h.digest() != before {
		t.Fatal("a refused reply changed the store")
	}
	// The operator's reply goes through the same call and meets the same bound.
	dave, _ := h.agent("dave")
	if _, err := h.admin.ReplyAs(bg(), disc, dave.ID, "as dave"); !errors.As(err, &ce) || ce.Reason != "UNSUPPORTED_OPERATION" {
		t.Fatalf("operator reply past the bound: %v", err)
	}
}

// TestDiscussionRepliesPaginated: GET /api/v1/discussions/{id} answers a
// page of replies, oldest first, and a token for the next.
func TestDiscussionRepliesPaginated(t *testing.T) {
	h := start(t, nil)
	_, ac := h.agent("alice")
	_, bc := h.agent("bob")
	disc := discussionOf(t, h.ask(ac, "m1", "Paginate me"))
	var want []string
	for i := range 5 {
		r, err := bc.Reply(bg(), disc, fmt.Sprint("reply ", i))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Reply.ID)
	}
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		d, err := h.anon.DiscussionPage(bg(), disc, 2, token)
		if err != nil {
			t.Fatal(err)
		}
		if d.ReplyCount != 5 || len(d.Replies) > 2 {
			t.Fatalf("page %d: %d of %d replies", pages, len(d.Replies), d.ReplyCount)
		}
		for _, r := range d.Replies {
			got = append(got, r.ID)
		}
		if token = d.NextPageToken; token == "" {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("replies %v, want %v", got, want)
	}
	for _, q := range []string{"?pageSize=0", "?pageSize=101", "?pageToken=nope"} {
		resp, body := h.raw("GET", "/api/v1/discussions/"+disc+q, nil, "")
		if resp.StatusCode != 400 {
			t.Errorf("%s: %d %s", q, resp.StatusCode, body)
		}
	}
	// The client's whole-discussion read follows the pages.
	if d, err := h.anon.Discussion(bg(), disc); err != nil || len(d.Replies) != 5 {
		t.Fatalf("whole discussion: %d replies, %v", len(d.Replies), err)
	}
}
