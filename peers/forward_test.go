package peers

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
)

func openDisc() *discussions.Discussion {
	return &discussions.Discussion{ID: "D", Title: "How?", Body: "Details.", AuthorID: "alice", AuthorName: "alice",
		Status: discussions.StatusOpen, CreatedAt: t0, Filters: discussions.Filters{Kind: "howto"}}
}

func TestDecideForwards(t *testing.T) {
	b := Peer{Name: "b", ForwardAsks: true}
	c := Peer{Name: "c", ForwardAsks: true}
	followOnly := Peer{Name: "f", Follow: true}
	paused := Peer{Name: "p", ForwardAsks: true, Paused: true}
	purging := Peer{Name: "q", ForwardAsks: true, Purging: true}
	all := []Peer{b, c, followOnly, paused, purging}
	for _, tc := range []struct {
		name     string
		d        func() *discussions.Discussion
		existing []Forward
		want     string
	}{
		{"every peer that forwards", openDisc, nil, "b,c"},
		{"once per peer", openDisc, []Forward{{Peer: "b"}}, "c"},
		{"no discussion", func() *discussions.Discussion { return nil }, nil, ""},
		{"the asker opted out", func() *discussions.Discussion { d := openDisc(); d.NoForward = true; return d }, nil, ""},
		{"a question that came from a peer", func() *discussions.Discussion {
			d := openDisc()
			d.Origin = &discussions.Origin{Server: "https://a.example", ID: "X"}
			return d
		}, nil, ""},
		{"answered already", func() *discussions.Discussion { d := openDisc(); d.Status = discussions.StatusAnswered; return d }, nil, ""},
		{"hidden", func() *discussions.Discussion { d := openDisc(); d.Hidden = true; return d }, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := DecideForwards(tc.d(), all, tc.existing, t0)
			var names []string
			for _, f := range out {
				names = append(names, f.Peer)
				if f.State != ForwardPending || f.Question != "How?" || f.Details != "Details." || f.Filters.Kind != "howto" || !f.NextAt.Equal(t0) {
					t.Fatalf("forward %+v", f)
				}
			}
			if strings.Join(names, ",") != tc.want {
				t.Fatalf("forwards to %v, want %q", names, tc.want)
			}
		})
	}
}

func TestForwardLifecycle(t *testing.T) {
	f := DecideForwards(openDisc(), []Peer{{Name: "b", ForwardAsks: true}}, nil, t0)[0]
	claimed, ok := DecideClaim(&f, t0)
	if !ok || !claimed.NextAt.Equal(t0.Add(claimFor)) {
		t.Fatalf("claim: %+v %v", claimed, ok)
	}
	if _, ok := DecideClaim(&claimed, t0.Add(time.Second)); ok {
		t.Fatal("a claimed forward claimed again before its claim ends")
	}
	failed, _ := DecideSendFailed(&claimed, "connection refused", t0)
	if failed.State != ForwardPending || failed.Attempts != 1 || !failed.NextAt.Equal(t0.Add(time.Second)) || failed.LastError == "" {
		t.Fatalf("after a failed send: %+v", failed)
	}
	sent, ok := DecideSent(&failed, Asked{TaskID: "T", DiscussionID: "RD", At: t0}, t0)
	if !ok || sent.State != ForwardAsked || sent.RemoteTaskID != "T" || sent.LastError != "" || !sent.Open() {
		t.Fatalf("sent: %+v", sent)
	}
	if _, ok := DecideSent(&sent, Asked{TaskID: "T2"}, t0); ok {
		t.Fatal("a forward sent twice")
	}
	closed := DecideClose([]Forward{sent, {State: ForwardAnswered}}, t0)
	if len(closed) != 1 || closed[0].State != ForwardClosed || closed[0].Open() {
		t.Fatalf("close: %+v", closed)
	}
	given := failed
	for range maxForwardAttempts + 5 {
		next, ok := DecideSendFailed(&given, "down", t0)
		if !ok {
			break
		}
		given = next
	}
	if given.State != ForwardClosed {
		t.Fatalf("after %d failed sends: %s", given.Attempts, given.State)
	}
}

func TestAnswerReplyID(t *testing.T) {
	remote := ulid.MustNew(ulid.Timestamp(t0), ulid.DefaultEntropy()).String()
	a, err := AnswerReplyID("b", remote)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := AnswerReplyID("b", remote)
	other, _ := AnswerReplyID("c", remote)
	if a != again || a == other || ulid.MustParse(a).Time() != ulid.MustParse(remote).Time() {
		t.Fatalf("ids %s %s %s", a, again, other)
	}
	if _, err := AnswerReplyID("b", "not-a-ulid"); err == nil {
		t.Fatal("an answer id from something that is not a ULID")
	}
}

func TestDecideAnswer(t *testing.T) {
	remoteReply := ulid.MustNew(ulid.Timestamp(t0), ulid.DefaultEntropy()).String()
	task := func(id, owner string) tasks.Task {
		return tasks.Task{ID: id, ContextID: "ctx", OwnerID: owner, DiscussionID: "D", State: a2a.TaskStateWorking, StatusTime: t0}
	}
	fwd := &Forward{Peer: "b", DiscussionID: "D", State: ForwardAsked}
	st := AnswerState{Forward: fwd, Reply: asknet.ReplyState{Discussion: openDisc(),
		Working: []tasks.Task{task("T1", "alice"), task("T2", "bob")},
		Members: []discussions.Member{{AgentID: "alice", TaskIDs: []string{"T1"}}, {AgentID: "bob", TaskIDs: []string{"T2"}}}}}
	a := Answer{Peer: "b", Server: "https://b.example", DiscussionID: "D", ReplyID: remoteReply, AuthorName: "carol",
		Body: "Do this.", URL: "https://b.example/discussions/RD"}
	others := []Forward{*fwd, {Peer: "c", DiscussionID: "D", State: ForwardPending}}
	now := t0.Add(time.Minute)
	lim := discussions.Limits{ReplyRate: ratelimit.PerMinute(1), MaxReplies: 10}

	out, err := DecideAnswer(st, a, others, lim, now)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Reply.Result.Reply
	if r.AuthorName != "carol@b" || r.AuthorID != RemoteAuthorID("b") || r.Origin == nil || r.Origin.URL != a.URL ||
		len(out.Reply.Result.CompletedTaskIDs) != 2 || len(out.Reply.Inbox) != 2 {
		t.Fatalf("answer: %+v", out.Reply.Result)
	}
	var ref struct {
		AuthorName string `json:"authorName"`
		Origin     struct {
			Peer string `json:"peer"`
			URL  string `json:"url"`
		} `json:"origin"`
	}
	if err := json.Unmarshal(out.Reply.Completed[0].Artifacts[0].Parts[1].Data, &ref); err != nil ||
		ref.AuthorName != "carol@b" || ref.Origin.Peer != "b" || ref.Origin.URL != a.URL {
		t.Fatalf("the artifact's data part: %+v %v", ref, err)
	}
	if len(out.Forwards) != 2 || out.Forwards[0].State != ForwardAnswered || out.Forwards[1].Peer != "c" || out.Forwards[1].State != ForwardClosed {
		t.Fatalf("forwards after: %+v", out.Forwards)
	}

	// The same answer again changes nothing; an answer for a discussion
	// never forwarded to the peer is refused; the discussion's bound holds.
	again := st
	again.Existing = &r
	if out, err := DecideAnswer(again, a, others, lim, now); err != nil || out.Reply != nil || out.Forwards != nil {
		t.Fatalf("the same answer again: %+v %v", out, err)
	}
	stranger := st
	stranger.Forward = nil
	if _, err := DecideAnswer(stranger, a, others, lim, now); !errors.Is(err, ErrNotForwarded) {
		t.Fatalf("an answer never asked for: %v", err)
	}
	full := st
	fd := *openDisc()
	fd.ReplyCount = 10
	full.Reply.Discussion = &fd
	if _, err := DecideAnswer(full, a, others, lim, now); !errors.Is(err, discussions.ErrTooManyReplies) {
		t.Fatalf("an answer past the discussion's bound: %v", err)
	}
	bad := a
	bad.Body = ""
	if _, err := DecideAnswer(st, bad, others, lim, now); err == nil {
		t.Fatal("an empty answer")
	}
}
