package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	peerdom "github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/tasks"
)

// The peers' commands (federation), written once over the seam: the
// stores keep their kinds generically.

const (
	srvB = "https://b.example"
	self = "https://a.example"
)

var cardB = peerdom.Card{Name: "kfa on b", A2AURL: srvB + "/a2a/v1"}

func addPeer(t *testing.T, e *env, name string, forward bool) peerdom.Peer {
	t.Helper()
	p, err := e.store.AddPeer(context.Background(), peerdom.AddInput{Name: name, URL: "https://" + name + ".example",
		Token: "kfa_t", Follow: true, ForwardAsks: forward}, cardB, e.clock.Now())
	if err != nil {
		t.Fatalf("add peer %s: %v", name, err)
	}
	return p
}

func feedRecord(id, title string, at time.Time) peerdom.Change {
	return peerdom.Change{Source: peerdom.SourceRecord, ID: id, Op: peerdom.OpUpsert, URL: srvB + "/records/" + id, At: at,
		Record: &knowledge.Record{ID: id, Kind: "howto", Title: title, Body: "body", UpdatedAt: at}}
}

func docCount(t *testing.T, e *env, name string) int {
	t.Helper()
	ps, err := e.store.ListPeers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == name {
			return p.Documents
		}
	}
	return -1
}

// testPeers: add (a name once), pause and resume, leases, pages of a
// peer's feed written with its cursor (and refused whole to a lost
// lease), tombstones, failures, and removal with and without purge.
func testPeers(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	s, now := e.store, e.clock.Now()
	addPeer(t, e, "b", false)
	if _, err := s.AddPeer(ctx, peerdom.AddInput{Name: "b", URL: srvB, Token: "x", Follow: true}, cardB, now); !errors.Is(err, peerdom.ErrExists) {
		t.Fatalf("a second peer b: %v", err)
	}
	if p, err := s.GetPeer(ctx, "b"); err != nil || p.URL != "https://b.example" || p.AgentName != "kfa on b" {
		t.Fatalf("get peer: %+v %v", p, err)
	}
	if _, err := s.GetPeer(ctx, "zz"); !errors.Is(err, peerdom.ErrNotFound) {
		t.Fatalf("get an unknown peer: %v", err)
	}

	if p, err := s.PausePeer(ctx, "b", now); err != nil || p.State() != peerdom.StatePaused {
		t.Fatalf("pause: %+v %v", p, err)
	}
	if _, ok, err := s.LeasePeer(ctx, "b", "h1", now); err != nil || ok {
		t.Fatalf("a lease of a paused peer: %v %v", ok, err)
	}
	if _, err := s.ResumePeer(ctx, "b", now); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LeasePeer(ctx, "b", "h1", now); err != nil || !ok {
		t.Fatalf("a lease of a resumed peer: %v %v", ok, err)
	}
	if _, ok, _ := s.LeasePeer(ctx, "b", "h2", now); ok {
		t.Fatal("two holders lease one peer")
	}

	Settle(t, s)
	before, err := s.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pg := peerdom.Page{Server: srvB, Next: "c1", Changes: []peerdom.Change{feedRecord("r1", "one", now), feedRecord("r2", "two", now),
		feedRecord("r3", "three", now)}}
	if _, err := s.ApplyPage(ctx, "b", "h2", "", self, pg, now); !errors.Is(err, peerdom.ErrLeaseLost) {
		t.Fatalf("a page of a lost lease: %v", err)
	}
	if n := docCount(t, e, "b"); n != 0 {
		t.Fatalf("a refused page wrote %d documents", n)
	}
	out, err := s.ApplyPage(ctx, "b", "h1", "", self, pg, now)
	if err != nil || len(out.Put) != 3 || out.Peer.Cursor != "c1" {
		t.Fatalf("apply a page: %+v %v", out, err)
	}
	if p, _ := s.GetPeer(ctx, "b"); p.Cursor != "c1" || p.Server != srvB {
		t.Fatalf("the peer after a page: %+v", p)
	}
	if n := docCount(t, e, "b"); n != 3 {
		t.Fatalf("%d documents after a page of 3", n)
	}
	key := peerdom.DocumentKey(srvB, peerdom.SourceRecord, "r2")
	if d, err := s.GetDocument(ctx, key); err != nil || d.Record == nil || d.Record.Title != "two" || d.Peer != "b" {
		t.Fatalf("a followed document: %+v %v", d, err)
	}
	if _, err := s.GetDocument(ctx, peerdom.DocumentKey(srvB, peerdom.SourceRecord, "none")); !errors.Is(err, peerdom.ErrNoDocument) {
		t.Fatalf("an unknown document: %v", err)
	}
	evs := readAll(t, s, before.Last, 100)
	docEvents := 0
	for _, ev := range evs {
		if ev.Kind == peerdom.EventDocument && ev.Ref == "b" {
			docEvents++
		}
	}
	if docEvents != 3 {
		t.Fatalf("%d document events for 3 documents: %+v", docEvents, evs)
	}
	// Hidden by this server's moderators: logged, and hidden still when
	// the peer sends it again.
	hide := moderation.Command{Action: moderation.ActionHide, Target: moderation.Target{Kind: moderation.KindDocument, ID: key},
		Actor: moderation.Actor{Kind: moderation.ActorOperator, Name: "op"}, Reason: "off topic", At: now}
	if res, err := s.ModerateDocument(ctx, hide); err != nil || !res.Changed || !res.Hidden {
		t.Fatalf("hide a followed document: %+v %v", res, err)
	}
	again := peerdom.Page{Server: srvB, Next: "c1", Changes: []peerdom.Change{feedRecord("r2", "two, edited", now)}}
	if _, err := s.ApplyPage(ctx, "b", "h1", "c1", self, again, now); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.GetDocument(ctx, key); !d.Hidden || d.Record.Title != "two, edited" {
		t.Fatalf("a hidden document sent again: %+v", d)
	}
	if p, _ := s.ListLog(ctx, moderation.LogQuery{PageSize: 10}); len(p.Entries) != 1 || p.Entries[0].ItemKind != moderation.KindDocument {
		t.Fatalf("the moderation log after hiding a document: %+v", p)
	}

	// Every document, two a page, newest key first.
	var all []string
	next := ""
	for range 10 {
		docs, n, err := s.ListDocuments(ctx, next, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			all = append(all, d.Key)
		}
		if next = n; next == "" {
			break
		}
	}
	if len(all) != 3 || all[0] < all[1] || all[1] < all[2] {
		t.Fatalf("listed documents: %v", all)
	}

	// A tombstone deletes; a failure makes the peer failing, a success ok.
	tomb := peerdom.Page{Server: srvB, Next: "c2", Changes: []peerdom.Change{{Source: peerdom.SourceRecord, ID: "r1",
		Op: peerdom.OpDelete, URL: srvB + "/records/r1", At: now}}}
	if out, err := s.ApplyPage(ctx, "b", "h1", "c1", self, tomb, now); err != nil || len(out.Delete) != 1 {
		t.Fatalf("a tombstone: %+v %v", out, err)
	}
	if n := docCount(t, e, "b"); n != 2 {
		t.Fatalf("%d documents after a tombstone", n)
	}
	if err := s.RecordOutcome(ctx, "b", peerdom.JobFollow, "h1", "connection refused", now); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.GetPeer(ctx, "b"); p.State() != peerdom.StateFailing || p.LastError != "connection refused" || p.Lease != "" {
		t.Fatalf("after a failure: %+v", p)
	}
	if err := s.RecordOutcome(ctx, "b", peerdom.JobFollow, "h1", "", now); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.GetPeer(ctx, "b"); p.State() != peerdom.StateOK {
		t.Fatalf("after a success: %s", p.State())
	}

	// Removed without purge, its documents stay; with it, they go a step
	// at a time, and the peer with the last of them.
	addPeer(t, e, "c", false)
	if err := s.RemovePeer(ctx, "c", false, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetPeer(ctx, "c"); !errors.Is(err, peerdom.ErrNotFound) {
		t.Fatalf("a removed peer: %v", err)
	}
	if err := s.RemovePeer(ctx, "b", true, now); err != nil {
		t.Fatal(err)
	}
	if p, err := s.GetPeer(ctx, "b"); err != nil || !p.Purging || p.Token != "" {
		t.Fatalf("a peer being purged: %+v %v", p, err)
	}
	steps := 0
	for ; steps < 5; steps++ {
		n, done, err := s.PurgeDocuments(ctx, "b", 1)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if n != 1 {
			t.Fatalf("a purge step deleted %d", n)
		}
	}
	if _, err := s.GetPeer(ctx, "b"); !errors.Is(err, peerdom.ErrNotFound) || steps != 2 {
		t.Fatalf("after the purge (%d steps): %v", steps, err)
	}
	if _, err := s.GetDocument(ctx, key); !errors.Is(err, peerdom.ErrNoDocument) {
		t.Fatalf("a purged document: %v", err)
	}
}

// testForwards: a discussion opened here is forwarded once per peer, sent
// once (a claim holds it), and its answer comes back as a reply that
// completes the waiting tasks, once whatever the number of tries; a
// question forwarded here keeps its origin, gets its placeholder, and is
// never forwarded again.
func testForwards(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	s, now := e.store, e.clock.Now()
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	addPeer(t, e, "b", true)
	addPeer(t, e, "f", false)
	tk := e.ask(t, alice, "fwd-1")
	joined := e.join(t, bob, "fwd-2", tk.DiscussionID)
	d := tk.DiscussionID

	fs, err := s.PlanForwards(ctx, d, now)
	if err != nil || len(fs) != 1 || fs[0].Peer != "b" || fs[0].Question != "question fwd-1" {
		t.Fatalf("plan the forwards: %+v %v", fs, err)
	}
	if again, err := s.PlanForwards(ctx, d, now); err != nil || len(again) != 0 {
		t.Fatalf("plan them again: %+v %v", again, err)
	}
	if due, err := s.ListForwards(ctx, "b", peerdom.ForwardPending, 10); err != nil || len(due) != 1 {
		t.Fatalf("the due forwards: %+v %v", due, err)
	}
	if _, ok, err := s.ClaimForward(ctx, "b", d, now); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, ok, _ := s.ClaimForward(ctx, "b", d, now); ok {
		t.Fatal("a forward claimed twice")
	}
	if err := s.ForwardSent(ctx, "b", d, peerdom.Asked{TaskID: "RT", DiscussionID: "RD", At: now}, now); err != nil {
		t.Fatal(err)
	}
	if asked, err := s.ListForwards(ctx, "b", peerdom.ForwardAsked, 10); err != nil || len(asked) != 1 || asked[0].RemoteTaskID != "RT" {
		t.Fatalf("the forwards in flight: %+v %v", asked, err)
	}

	remote := ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String()
	a := peerdom.Answer{Peer: "b", Server: srvB, DiscussionID: d, ReplyID: remote, AuthorName: "carol", Body: "Like this.",
		URL: srvB + "/discussions/RD"}
	out, err := s.AddAnswer(ctx, a, discussions.Limits{}, now)
	if err != nil || out.Reply == nil || len(out.Reply.Result.CompletedTaskIDs) != 2 {
		t.Fatalf("the answer: %+v %v", out, err)
	}
	for _, id := range []string{tk.ID, joined.ID} {
		mustState(t, e.task(t, id), a2a.TaskStateCompleted)
	}
	if again, err := s.AddAnswer(ctx, a, discussions.Limits{}, now); err != nil || again.Reply != nil {
		t.Fatalf("the same answer again: %+v %v", again, err)
	}
	disc, err := s.GetDiscussion(ctx, d)
	if err != nil || disc.ReplyCount != 1 || disc.Status != discussions.StatusAnswered {
		t.Fatalf("the discussion after two tries of one answer: %+v %v", disc, err)
	}
	r, err := s.GetReply(ctx, d, out.Reply.Result.Reply.ID)
	if err != nil || r.AuthorName != "carol@b" || r.Origin == nil || r.Origin.Peer != "b" {
		t.Fatalf("the answer's reply: %+v %v", r, err)
	}
	if asked, _ := s.ListForwards(ctx, "b", peerdom.ForwardAsked, 10); len(asked) != 0 {
		t.Fatalf("an answered forward still in flight: %+v", asked)
	}
	other := e.ask(t, alice, "fwd-3")
	if _, err := s.AddAnswer(ctx, peerdom.Answer{Peer: "b", Server: srvB, DiscussionID: other.DiscussionID, ReplyID: remote,
		AuthorName: "x", Body: "y"}, discussions.Limits{}, now); !errors.Is(err, peerdom.ErrNotForwarded) {
		t.Fatalf("an answer to what was never forwarded: %v", err)
	}

	// A discussion answered here closes its forwards.
	if _, err := s.PlanForwards(ctx, other.DiscussionID, now); err != nil {
		t.Fatal(err)
	}
	e.reply(t, bob, other.DiscussionID, "answered here")
	if err := s.CloseForwards(ctx, other.DiscussionID, now); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.ListForwards(ctx, "b", peerdom.ForwardPending, 10); len(due) != 0 {
		t.Fatalf("a forward of a discussion answered here: %+v", due)
	}

	// A question a peer forwarded here.
	in := askInput(alice, "fwd-4", "a forwarded question")
	in.Origin = &discussions.Origin{Server: "https://c.example", ID: "01JD0000000000000000000000"}
	ftk, _, err := e.tk.Ask(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := s.GetDiscussion(ctx, ftk.DiscussionID)
	if err != nil || fd.Origin == nil || !fd.NoForward {
		t.Fatalf("a forwarded question: %+v %v", fd, err)
	}
	ph, err := s.GetDocument(ctx, peerdom.DocumentKey("https://c.example", peerdom.SourceDiscussion, "01JD0000000000000000000000"))
	if err != nil || ph.Peer != "" || ph.LocalID != fd.ID || ph.Visible() {
		t.Fatalf("its placeholder: %+v %v", ph, err)
	}
	if fs, err := s.PlanForwards(ctx, fd.ID, now); err != nil || len(fs) != 0 {
		t.Fatalf("a forwarded question forwarded again: %+v %v", fs, err)
	}
	// Removing the peer drops its open forwards.
	e.ask(t, alice, "fwd-5")
	last := e.ask(t, bob, "fwd-6")
	if fs, _ := s.PlanForwards(ctx, last.DiscussionID, now); len(fs) != 1 {
		t.Fatalf("forwards of a new question: %+v", fs)
	}
	if err := s.RemovePeer(ctx, "b", false, now); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.ListForwards(ctx, "b", peerdom.ForwardPending, 10); len(due) != 0 {
		t.Fatalf("the forwards of a removed peer: %+v", due)
	}
}
