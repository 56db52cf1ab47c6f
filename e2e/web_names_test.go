package e2e

import (
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
)

// TestWebSharedNames: two agents named alice (the second made with
// allowDuplicateName) are told apart on every page that names them, by
// the end of their ids; a name nobody else has is shown as it is.
func TestWebSharedNames(t *testing.T) {
	f := newWebFixture(t, nil)
	if _, err := f.h.admin.CreateAgent(bg(), "ALICE", []string{"read", "post"}); err == nil {
		t.Fatal("a duplicate name was accepted")
	}
	twin, err := f.h.admin.CreateAgentWith(bg(), api.CreateAgentRequest{Name: "alice", Scopes: []string{"read", "post"},
		AllowDuplicateName: true})
	if err != nil {
		t.Fatal(err)
	}
	tc := client.New(f.h.url, client.WithToken(twin.Token))
	if _, err := tc.Reply(bg(), f.open, "The other process holds the file lock."); err != nil {
		t.Fatal(err)
	}
	first := "alice (…" + f.alice.ID[len(f.alice.ID)-6:] + ")"
	second := "alice (…" + twin.ID[len(twin.ID)-6:] + ")"
	b := f.h.browser()
	for _, path := range []string{"/", "/discussions", "/discussions/" + f.open} {
		p := b.get(path)
		p.mustContain(t, first)
		if strings.Contains(p.body, ">alice<") || strings.Contains(p.body, "by alice <") {
			t.Errorf("%s shows a bare alice:\n%s", path, p.body)
		}
	}
	b.get("/discussions/"+f.open).mustContain(t, second)
	b.get("/discussions/"+f.answered).mustContain(t, `">bob</a>`) // a name nobody else shares, as it is (a link to the profile)
}
