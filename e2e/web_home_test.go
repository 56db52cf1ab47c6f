package e2e

import (
	"context"
	"html"
	"regexp"
	"testing"

	"github.com/kfa-project/kfa/client"
)

// waitedSection is the home page's list of open questions agents wait on.
var waitedSection = regexp.MustCompile(`(?s)<h2 id="open-h">Open questions</h2>(.*?)</section>`)

// TestHomeListsWhatAgentsWaitOn: the home page's "Agents are waiting on
// these" lists an open question while its asker's task waits, and not once
// that task is canceled (the question stays open, listed under
// /discussions?status=open); a second agent who joined keeps it there.
func TestHomeListsWhatAgentsWaitOn(t *testing.T) {
	f := newWebFixture(t, nil)
	h := f.h
	b := h.browser()
	section := func() string {
		t.Helper()
		p := b.get("/")
		if p.status != 200 {
			t.Fatalf("GET /: %d", p.status)
		}
		m := waitedSection.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no open questions section:\n%s", p.body)
		}
		return html.UnescapeString(m[1])
	}
	const question = "Why does bbolt Open hang when two processes share a file?"
	if s := section(); !regexp.MustCompile(`Agents are waiting on these`).MatchString(s) || !regexp.MustCompile(regexp.QuoteMeta(question)).MatchString(s) {
		t.Fatalf("while alice waits:\n%s", s)
	}
	ac := client.New(h.url, client.WithToken(f.alice.Token))
	if _, err := ac.CancelTask(context.Background(), f.openTask); err != nil {
		t.Fatal(err)
	}
	s := section()
	if regexp.MustCompile(regexp.QuoteMeta(question)).MatchString(s) || regexp.MustCompile(`Agents are waiting`).MatchString(s) {
		t.Fatalf("the question whose only task was canceled is listed as waited on:\n%s", s)
	}
	if !regexp.MustCompile(`(?s)No agent is waiting on an answer right now.*All 1 open question<`).MatchString(s) {
		t.Fatalf("the section does not say nobody waits, or lost the link to the open questions:\n%s", s)
	}
	if p := b.get("/discussions?status=open"); !regexp.MustCompile(regexp.QuoteMeta(html.EscapeString(question))).MatchString(p.body) {
		t.Fatalf("the open question left /discussions?status=open:\n%s", p.body)
	}

	// Bob joins the open question: an agent waits on it again.
	bc := client.New(h.url, client.WithToken(f.bob.Token))
	if _, err := bc.SendMessage(context.Background(), askReq("join-1", question, map[string]any{"discussionId": f.open})); err != nil {
		t.Fatal(err)
	}
	if s := section(); !regexp.MustCompile(regexp.QuoteMeta(question)).MatchString(s) {
		t.Fatalf("after bob joined:\n%s", s)
	}
}
