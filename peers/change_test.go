package peers

import (
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
)

func TestThreadOf(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	reply := func(id string, min int, body string) discussions.Reply {
		return discussions.Reply{ID: id, DiscussionID: "d", AuthorID: "agent-" + id, AuthorName: "n" + id, Body: body,
			CreatedAt: t0.Add(time.Duration(min) * time.Minute)}
	}
	d := discussions.Discussion{ID: "d", Title: "q", AuthorID: "asker", AuthorName: "asker", Status: discussions.StatusAnswered,
		CreatedAt: t0, AnsweredAt: t0.Add(time.Minute)}
	r1, r2, r3 := reply("r1", 1, "one"), reply("r2", 2, "two"), reply("r3", 3, "three")
	hidden := reply("rh", 4, "hidden")
	hidden.Hidden = true
	back := reply("rb", 5, "from a peer")
	back.Origin = &discussions.Origin{Peer: "b", Server: "https://b.example", URL: "https://b.example/discussions/x"}
	big := reply("big", 6, strings.Repeat("x", MaxThreadReplyBytes+1))
	many := make([]discussions.Reply, 0, MaxThreadReplies+5)
	for i := range MaxThreadReplies + 5 {
		many = append(many, reply("m"+string(rune('a'+i%26))+string(rune('a'+i/26)), 1, "m"))
	}

	ids := func(tr Thread) string {
		var s []string
		for _, r := range tr.Replies {
			s = append(s, r.ID)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		name     string
		accepted string
		replies  []discussions.Reply
		want     string
		wantAcc  string
	}{
		{"oldest first", "", []discussions.Reply{r1, r2, r3}, "r1,r2,r3", ""},
		{"the accepted reply first", "r3", []discussions.Reply{r1, r2, r3}, "r3,r1,r2", "r3"},
		{"hidden replies never", "", []discussions.Reply{r1, hidden, r2}, "r1,r2", ""},
		{"a reply that came back keeps its origin", "", []discussions.Reply{r1, back}, "r1,rb", ""},
		{"at most the bytes of a thread", "", []discussions.Reply{r1, big, r2}, "r1", ""},
		{"an accepted reply past the bytes loses the mark", "big", []discussions.Reply{r1, big}, "r1", ""},
		{"at most MaxThreadReplies", "", many, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dd := d
			dd.AcceptedReplyID = tc.accepted
			var acc *discussions.Reply
			for i := range tc.replies {
				if tc.replies[i].ID == tc.accepted {
					acc = &tc.replies[i]
				}
			}
			got := ThreadOf(dd, acc, tc.replies)
			if tc.name == "at most MaxThreadReplies" {
				if len(got.Replies) != MaxThreadReplies {
					t.Fatalf("%d replies, want %d", len(got.Replies), MaxThreadReplies)
				}
				return
			}
			if ids(got) != tc.want || got.AcceptedReplyID != tc.wantAcc {
				t.Fatalf("replies %q accepted %q; want %q accepted %q", ids(got), got.AcceptedReplyID, tc.want, tc.wantAcc)
			}
			for _, r := range got.Replies {
				if (r.ID == "rb") != (r.Origin != nil) {
					t.Fatalf("reply %s origin %+v", r.ID, r.Origin)
				}
			}
			if want := tc.replies[len(tc.replies)-1].CreatedAt; tc.want == "r1,r2,r3" && !got.ChangedAt().Equal(want) {
				t.Fatalf("ChangedAt %v, want the newest reply's %v", got.ChangedAt(), want)
			}
		})
	}
}
