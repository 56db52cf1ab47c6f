package moderation

import (
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
)

func TestLocate(t *testing.T) {
	d := &discussions.Discussion{ID: "D"}
	other := &discussions.Discussion{ID: "O"}
	r := &discussions.Reply{ID: "R", DiscussionID: "O"}
	for _, tc := range []struct {
		name       string
		target     Target
		found      Found
		kind       Kind
		disc, repl string
	}{
		{"a discussion", Target{Kind: KindDiscussion, ID: "D"}, Found{Discussion: d}, KindDiscussion, "D", ""},
		{"no discussion", Target{Kind: KindDiscussion, ID: "D"}, Found{}, KindDiscussion, "", ""},
		{"a reply with its discussion", Target{Kind: KindReply, ID: "R", DiscussionID: "O"}, Found{Reply: r, ReplyDiscussion: other}, KindReply, "O", "R"},
		{"a reply by id alone", Target{Kind: KindReply, ID: "R"}, Found{Reply: r, ReplyDiscussion: other}, KindReply, "O", "R"},
		{"a reply without its discussion", Target{Kind: KindReply, ID: "R"}, Found{Reply: r}, KindReply, "", "R"},
		{"no such reply on a discussion", Target{Kind: KindReply, ID: "R", DiscussionID: "O"}, Found{ReplyDiscussion: other}, KindReply, "O", ""},
		{"either: a discussion", Target{ID: "D"}, Found{Discussion: d}, KindDiscussion, "D", ""},
		{"either: a reply", Target{ID: "R"}, Found{Reply: r, ReplyDiscussion: other}, KindReply, "O", "R"},
		{"either: neither", Target{ID: "X"}, Found{}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := Locate(tc.target, tc.found)
			disc, repl := "", ""
			if st.Discussion != nil {
				disc = st.Discussion.ID
			}
			if st.Reply != nil {
				repl = st.Reply.ID
			}
			if got.Kind != tc.kind || disc != tc.disc || repl != tc.repl {
				t.Fatalf("Locate = %s (discussion %q, reply %q), want %s (%q, %q)", got.Kind, disc, repl, tc.kind, tc.disc, tc.repl)
			}
			if got.Kind == KindReply && tc.repl != "" && got.DiscussionID != "O" {
				t.Fatalf("a located reply's discussion id = %q", got.DiscussionID)
			}
		})
	}
	// Neither, decided: the item is not found, as either.
	target, st := Locate(Target{ID: "X"}, Found{})
	if _, err := DecideModerate(st, Command{Action: ActionHide, Target: target}); err == nil || err.Error() == "" {
		t.Fatal("a target found as neither was moderated")
	} else if e, ok := err.(*ItemNotFoundError); !ok || e.Kind != "" || e.ID != "X" {
		t.Fatalf("err = %#v, want an *ItemNotFoundError of either kind", err)
	}
}

// TestLocateAnswer: a located reply's Answer is its discussion's earliest
// visible qualifying reply besides it, whatever order the replies come in.
func TestLocateAnswer(t *testing.T) {
	d := &discussions.Discussion{ID: "D", AuthorID: "alice"}
	at := func(s int) time.Time { return time.Date(2026, 12, 7, 9, 0, s, 0, time.UTC) }
	target := discussions.Reply{ID: "R1", DiscussionID: "D", AuthorID: "bob", CreatedAt: at(1)}
	own := discussions.Reply{ID: "R0", DiscussionID: "D", AuthorID: "alice", CreatedAt: at(0)}
	hidden := discussions.Reply{ID: "R2", DiscussionID: "D", AuthorID: "carol", CreatedAt: at(2), Hidden: true}
	later := discussions.Reply{ID: "R4", DiscussionID: "D", AuthorID: "dave", CreatedAt: at(4)}
	next := discussions.Reply{ID: "R3", DiscussionID: "D", AuthorID: "carol", CreatedAt: at(3)}
	for _, tc := range []struct {
		name    string
		replies []discussions.Reply
		want    string
	}{
		{"none besides it", []discussions.Reply{own, target, hidden}, ""},
		{"the earliest visible besides it", []discussions.Reply{later, target, own, hidden, next}, "R3"},
		{"no replies loaded", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, st := Locate(Target{Kind: KindReply, ID: "R1", DiscussionID: "D"},
				Found{Reply: &target, ReplyDiscussion: d, Replies: tc.replies})
			got := ""
			if st.Answer != nil {
				got = st.Answer.ID
			}
			if got != tc.want {
				t.Fatalf("Answer = %q, want %q", got, tc.want)
			}
		})
	}
}
