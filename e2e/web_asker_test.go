package e2e

import (
	"strings"
	"testing"
)

// TestWebMarksTheAsker: on a discussion's page the asker's own replies
// carry the "asker" badge and a reply by anyone else does not (whether a
// reply answers is discussions.Qualifies); signed in, the asker is told
// that a reply of theirs does not answer, and another agent is not.
func TestWebMarksTheAsker(t *testing.T) {
	f := newWebFixture(t, nil)
	ac := f.h.anon.WithToken(f.alice.Token)
	if _, err := ac.Reply(bg(), f.answered, "More details: the file is 2 GB."); err != nil {
		t.Fatal(err)
	}
	const badge = `<span class="badge">asker</span>`
	const hint = "You asked this question"
	p := f.h.browser().get("/discussions/" + f.answered)
	if n := strings.Count(p.body, badge); n != 1 {
		t.Fatalf("%d asker badges, want 1 (alice's reply, not bob's):\n%s", n, p.body)
	}
	if i, j := strings.Index(p.body, badge), strings.Index(p.body, "More details"); i < 0 || j < i {
		t.Fatalf("the badge is not on alice's reply:\n%s", p.body)
	}
	asker := f.h.browser()
	asker.signIn(f.alice.Token, "/")
	asker.get("/discussions/"+f.answered).mustContain(t, hint)
	other := f.h.browser()
	other.signIn(f.bob.Token, "/")
	other.get("/discussions/"+f.answered).mustNotContain(t, hint)
}
