package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

func testReplyCompletes(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	tk := e.ask(t, a, "m1")
	joinedByB := e.join(t, b, "b1", tk.DiscussionID)
	joinedByC := e.join(t, c, "c1", tk.DiscussionID)
	e.clock.Advance(time.Minute)

	// Carol's reply qualifies (she is not the author); it completes every
	// waiting task except her own.
	r := e.reply(t, c, tk.DiscussionID, "Use Tx.WriteTo for a hot copy.")
	if !r.Qualifying {
		t.Fatal("reply by another agent must qualify")
	}
	want := []string{tk.ID, joinedByB.ID}
	slices.Sort(want)
	got := slices.Clone(r.CompletedTaskIDs)
	slices.Sort(got)
	if !eqStrings(got, want) {
		t.Fatalf("completed %v, want %v", got, want)
	}
	done := e.task(t, tk.ID)
	mustState(t, done, a2a.TaskStateCompleted)
	if !done.StatusTime.Equal(e.clock.Now()) || !done.StatusTime.Equal(r.Reply.CreatedAt) {
		t.Fatalf("completion timestamp %s, want the reply's %s", done.StatusTime, r.Reply.CreatedAt)
	}
	if done.StatusMessage == nil || done.StatusMessage.Role != a2a.RoleAgent {
		t.Fatalf("status message: %+v", done.StatusMessage)
	}
	if len(done.Artifacts) != 1 || len(done.Artifacts[0].Parts) != 2 {
		t.Fatalf("artifacts: %+v", done.Artifacts)
	}
	parts := done.Artifacts[0].Parts
	if parts[0].Text == nil || *parts[0].Text != "Use Tx.WriteTo for a hot copy." {
		t.Fatalf("artifact text part: %+v", parts[0])
	}
	var ref map[string]string
	if err := json.Unmarshal(parts[1].Data, &ref); err != nil ||
		ref["discussionId"] != tk.DiscussionID || ref["replyId"] != r.Reply.ID || ref["authorId"] != c.ID || ref["authorName"] != "carol" {
		t.Fatalf("artifact data part: %s (%v)", parts[1].Data, err)
	}
	mustState(t, e.task(t, joinedByC.ID), a2a.TaskStateWorking)

	d, err := e.store.GetDiscussion(ctx, tk.DiscussionID)
	if err != nil || d.Status != discussions.StatusAnswered || !d.AnsweredAt.Equal(r.Reply.CreatedAt) || d.ReplyCount != 1 {
		t.Fatalf("discussion: %+v %v", d, err)
	}
	// Inbox: one entry for alice and one for bob, naming their tasks; none for carol.
	for _, tc := range []struct {
		who   string
		id    string
		tasks []string
	}{{"alice", a.ID, []string{tk.ID}}, {"bob", b.ID, []string{joinedByB.ID}}, {"carol", c.ID, nil}} {
		in, err := e.ds.Inbox(ctx, tc.id, false, new(10), "")
		if err != nil {
			t.Fatal(err)
		}
		if tc.tasks == nil {
			if len(in.Entries) != 0 {
				t.Fatalf("%s: replier got an inbox entry: %+v", tc.who, in.Entries)
			}
			continue
		}
		if len(in.Entries) != 1 || in.Entries[0].ReplyID != r.Reply.ID || !eqStrings(in.Entries[0].TaskIDs, tc.tasks) {
			t.Fatalf("%s inbox: %+v", tc.who, in.Entries)
		}
	}
	// Terminal states never change: a second qualifying reply touches nothing done.
	before := e.task(t, tk.ID)
	r2 := e.reply(t, b, tk.DiscussionID, "another answer")
	if slices.Contains(r2.CompletedTaskIDs, tk.ID) {
		t.Fatal("a completed task was completed again")
	}
	after := e.task(t, tk.ID)
	if !after.StatusTime.Equal(before.StatusTime) || after.Artifacts[0].ArtifactID != before.Artifacts[0].ArtifactID {
		t.Fatal("a completed task changed")
	}
	// Bob's reply completes carol's waiting task.
	if !eqStrings(r2.CompletedTaskIDs, []string{joinedByC.ID}) {
		t.Fatalf("second reply completed %v, want carol's task", r2.CompletedTaskIDs)
	}
}

func testReplyByAuthor(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk := e.ask(t, a, "m1")
	joined := e.join(t, b, "b1", tk.DiscussionID)
	r := e.reply(t, a, tk.DiscussionID, "more details from the author")
	if r.Qualifying || len(r.CompletedTaskIDs) != 0 {
		t.Fatalf("author's reply: %+v", r)
	}
	mustState(t, e.task(t, tk.ID), a2a.TaskStateWorking)
	mustState(t, e.task(t, joined.ID), a2a.TaskStateWorking)
	d, _ := e.store.GetDiscussion(ctx, tk.DiscussionID)
	if d.Status != discussions.StatusOpen || d.ReplyCount != 1 {
		t.Fatalf("discussion after author reply: %+v", d)
	}
	// Bob, who joined, hears that someone else replied; alice does not.
	if in, err := e.ds.Inbox(ctx, b.ID, false, new(10), ""); err != nil || len(in.Entries) != 1 {
		t.Fatalf("bob inbox: %+v %v", in.Entries, err)
	}
	if in, err := e.ds.Inbox(ctx, a.ID, false, new(10), ""); err != nil || len(in.Entries) != 0 {
		t.Fatalf("alice inbox: %+v %v", in.Entries, err)
	}
}

func testReplyUnknownDiscussion(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	a := e.agent(t, "alice")
	for _, id := range []string{"01JD0000000000000000000000", "nope", ""} {
		_, err := e.ds.Reply(context.Background(), discussions.Author{ID: a.ID, Name: a.Name}, id, "hello")
		errIs(t, err, discussions.ErrNotFound, "reply on "+id)
	}
}

func testLaterReplyCompletesJoined(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	tk := e.ask(t, a, "m1")
	bobs := e.join(t, b, "b1", tk.DiscussionID)
	// Bob answers: alice's task completes, bob's own stays waiting.
	r1 := e.reply(t, b, tk.DiscussionID, "answer from bob")
	if !eqStrings(r1.CompletedTaskIDs, []string{tk.ID}) {
		t.Fatalf("first reply completed %v", r1.CompletedTaskIDs)
	}
	mustState(t, e.task(t, bobs.ID), a2a.TaskStateWorking)
	// A later reply on the answered discussion completes bob's task.
	r2 := e.reply(t, c, tk.DiscussionID, "answer from carol")
	if !eqStrings(r2.CompletedTaskIDs, []string{bobs.ID}) {
		t.Fatalf("later reply completed %v", r2.CompletedTaskIDs)
	}
}

func testInbox(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	var discs []string
	for i := range 5 {
		discs = append(discs, e.ask(t, a, fmt.Sprintf("m%d", i)).DiscussionID)
	}
	for i, d := range discs {
		e.clock.Advance(time.Second)
		replier := b
		if i%2 == 1 {
			replier = c
		}
		e.reply(t, replier, d, fmt.Sprintf("answer %d", i))
	}
	// Oldest first, paginated.
	var all []discussions.InboxEntry
	token := ""
	for range 10 {
		p, err := e.ds.Inbox(ctx, a.ID, false, new(2), token)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.Entries...)
		if token = p.NextPageToken; token == "" {
			break
		}
	}
	if len(all) != 5 {
		t.Fatalf("inbox walk: %d entries", len(all))
	}
	for i, en := range all {
		if en.DiscussionID != discs[i] || (i > 0 && !all[i-1].CreatedAt.Before(en.CreatedAt)) {
			t.Fatalf("inbox order at %d: %+v", i, en)
		}
	}
	// A token is bound to its agent and filters.
	p, _ := e.ds.Inbox(ctx, a.ID, false, new(2), "")
	if _, err := e.ds.Inbox(ctx, b.ID, false, new(2), p.NextPageToken); err == nil {
		t.Fatal("another agent's page token was accepted")
	}
	if _, err := e.ds.Inbox(ctx, a.ID, true, new(2), p.NextPageToken); err == nil {
		t.Fatal("a page token was accepted with other filters")
	}

	tasksBefore, _ := e.tk.List(ctx, a.ID, tasks.ListParams{})
	res, err := e.ds.Ack(ctx, a.ID, []string{all[0].ID, all[1].ID, "01JD0000000000000000000000"})
	if err != nil || len(res.Acked) != 2 || len(res.NotFound) != 1 {
		t.Fatalf("ack: %+v %v", res, err)
	}
	// Idempotent, and another agent cannot ack alice's entries.
	res, err = e.ds.Ack(ctx, a.ID, []string{all[0].ID})
	if err != nil || len(res.AlreadyAcked) != 1 || len(res.Acked) != 0 {
		t.Fatalf("ack again: %+v %v", res, err)
	}
	res, err = e.ds.Ack(ctx, b.ID, []string{all[2].ID})
	if err != nil || len(res.NotFound) != 1 {
		t.Fatalf("foreign ack: %+v %v", res, err)
	}
	un, _ := e.ds.Inbox(ctx, a.ID, true, new(10), "")
	if len(un.Entries) != 3 || un.Entries[0].ID != all[2].ID {
		t.Fatalf("unacked: %+v", un.Entries)
	}
	acked, _ := e.ds.Inbox(ctx, a.ID, false, new(10), "")
	if acked.Entries[0].AckedAt.IsZero() || !acked.Entries[2].AckedAt.IsZero() {
		t.Fatalf("acked times: %+v", acked.Entries)
	}
	// Reading and acking changed no task.
	tasksAfter, _ := e.tk.List(ctx, a.ID, tasks.ListParams{})
	for i := range tasksBefore.Tasks {
		x, y := tasksBefore.Tasks[i], tasksAfter.Tasks[i]
		if x.ID != y.ID || x.State != y.State || !x.StatusTime.Equal(y.StatusTime) {
			t.Fatalf("inbox use changed task %s", x.ID)
		}
	}
}

// testStatusTimestamp checks that nothing but create, qualifying
// completion and cancel moves a task's status timestamp.
func testStatusTimestamp(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk := e.ask(t, a, "m1")
	created := tk.StatusTime
	var joined tasks.Task
	steps := []struct {
		name string
		do   func() error
	}{
		{"idempotent retry", func() error {
			again, made, err := e.tk.Ask(ctx, askInput(a, "m1", "again"))
			if err == nil && (made || again.ID != tk.ID) {
				err = fmt.Errorf("retry made task %s (created=%v)", again.ID, made)
			}
			return err
		}},
		{"author reply", func() error {
			_, err := e.ds.Reply(ctx, discussions.Author{ID: a.ID, Name: a.Name}, tk.DiscussionID, "details")
			return err
		}},
		{"someone joins", func() error { joined = e.join(t, b, "b1", tk.DiscussionID); return nil }},
		// Bob has a task on the discussion now: the author's next reply,
		// which does not qualify, is a notice in bob's inbox.
		{"author reply to a joiner", func() error {
			_, err := e.ds.Reply(ctx, discussions.Author{ID: a.ID, Name: a.Name}, tk.DiscussionID, "more details")
			return err
		}},
		{"inbox read", func() error { _, err := e.ds.Inbox(ctx, b.ID, false, new(10), ""); return err }},
		{"rotate", func() error { _, err := e.ag.Rotate(ctx, a.ID, 0); return err }},
	}
	unchanged := func(what string) {
		t.Helper()
		if got := e.task(t, tk.ID).StatusTime; !got.Equal(created) {
			t.Fatalf("%s moved the status timestamp from %s to %s", what, created, got)
		}
	}
	for _, s := range steps {
		e.clock.Advance(time.Second)
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		unchanged(s.name)
	}
	in, err := e.ds.Inbox(ctx, b.ID, false, new(10), "")
	if err != nil || len(in.Entries) != 1 || in.Entries[0].DiscussionID != tk.DiscussionID ||
		!eqStrings(in.Entries[0].TaskIDs, []string{joined.ID}) {
		t.Fatalf("bob's inbox after the author's reply: %+v %v", in.Entries, err)
	}
	joinedAt := e.task(t, joined.ID).StatusTime
	e.clock.Advance(time.Second)
	res, err := e.ds.Ack(ctx, b.ID, []string{in.Entries[0].ID})
	if err != nil || !eqStrings(res.Acked, []string{in.Entries[0].ID}) {
		t.Fatalf("ack: %+v %v", res, err)
	}
	unchanged("ack")
	if got := e.task(t, joined.ID); !got.StatusTime.Equal(joinedAt) || got.State != a2a.TaskStateWorking {
		t.Fatalf("ack changed the acking agent's task: %s since %s", got.State, got.StatusTime)
	}
}

// testReplyRacesCancel races a qualifying reply against the owner's cancel
// on one task, many times: exactly one wins and every view agrees, and
// both outcomes occur (a race that one side always wins tests one path
// only). It runs at least minRounds rounds, and more, up to maxRounds,
// until each side has won once: a slow or busy machine needs more rounds,
// never fails for it.
func testReplyRacesCancel(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	minRounds, maxRounds := 200, 5000
	if testing.Short() {
		minRounds = 50
	}
	completed, canceled, rounds := 0, 0, 0
	for i := 0; i < maxRounds && (i < minRounds || completed == 0 || canceled == 0); i++ {
		rounds++
		tk := e.ask(t, a, fmt.Sprintf("race-%d", i))
		var (
			wg        sync.WaitGroup
			rep       discussions.ReplyResult
			repErr    error
			cancelErr error
		)
		start := make(chan struct{})
		replyFn := func() {
			defer wg.Done()
			<-start
			rep, repErr = e.ds.Reply(ctx, discussions.Author{ID: b.ID, Name: b.Name}, tk.DiscussionID, "answer")
		}
		cancelFn := func() {
			defer wg.Done()
			<-start
			_, _, cancelErr = e.tk.Cancel(ctx, a.ID, tk.ID)
		}
		wg.Add(2)
		// Alternate who is launched first so both orders occur.
		if i%2 == 0 {
			go replyFn()
			go cancelFn()
		} else {
			go cancelFn()
			go replyFn()
		}
		close(start)
		wg.Wait()
		if repErr != nil {
			t.Fatalf("round %d reply: %v", i, repErr)
		}
		final := e.task(t, tk.ID)
		switch final.State {
		case a2a.TaskStateCompleted:
			completed++
			if !isErr(cancelErr, tasks.ErrNotCancelable) || !slices.Contains(rep.CompletedTaskIDs, tk.ID) || len(final.Artifacts) != 1 {
				t.Fatalf("round %d: completed, but cancel=%v reply completed %v", i, cancelErr, rep.CompletedTaskIDs)
			}
		case a2a.TaskStateCanceled:
			canceled++
			if cancelErr != nil || slices.Contains(rep.CompletedTaskIDs, tk.ID) || len(final.Artifacts) != 0 {
				t.Fatalf("round %d: canceled, but cancel=%v reply completed %v", i, cancelErr, rep.CompletedTaskIDs)
			}
		default:
			t.Fatalf("round %d: final state %s", i, final.State)
		}
		// Either way the reply is stored, the discussion answered, and alice told.
		d, replies, err := e.ds.Get(ctx, tk.DiscussionID, nil, "")
		if err != nil || len(replies.Replies) != 1 || d.Status != discussions.StatusAnswered {
			t.Fatalf("round %d discussion: %+v %d %v", i, d, len(replies.Replies), err)
		}
	}
	in, err := e.ds.Inbox(ctx, a.ID, false, new(100), "")
	if err != nil {
		t.Fatal(err)
	}
	total := len(in.Entries)
	for tok := in.NextPageToken; tok != ""; {
		p, err := e.ds.Inbox(ctx, a.ID, false, new(100), tok)
		if err != nil {
			t.Fatal(err)
		}
		total += len(p.Entries)
		tok = p.NextPageToken
	}
	if total != rounds {
		t.Fatalf("inbox entries %d, want one per round (%d)", total, rounds)
	}
	t.Logf("%d rounds: %d completed, %d canceled", rounds, completed, canceled)
	if completed == 0 || canceled == 0 {
		t.Fatalf("%d rounds: %d completed, %d canceled; both outcomes must occur", rounds, completed, canceled)
	}
}

// testReplyRacesCancelAndJoin races three writers on one discussion: the
// author cancels, a third agent joins, a fourth replies. A join that
// succeeded came before the reply (a join after it is refused, the
// discussion being answered), so the joined task always ends completed.
func testReplyRacesCancelAndJoin(t *testing.T, open Opener) {
	e := newEnv(t, open, tasks.Limits{})
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	rounds := 100
	if testing.Short() {
		rounds = 30
	}
	joinedFirst, refused := 0, 0
	for i := range rounds {
		tk := e.ask(t, a, fmt.Sprintf("race3-%d", i))
		var (
			wg                sync.WaitGroup
			joined            tasks.Task
			joinErr, cancelEr error
			rep               discussions.ReplyResult
			repErr            error
		)
		start := make(chan struct{})
		wg.Add(3)
		go func() {
			defer wg.Done()
			<-start
			in := askInput(c, fmt.Sprintf("join-%d", i), "")
			in.JoinDiscussionID = tk.DiscussionID
			joined, _, joinErr = e.tk.Ask(ctx, in)
		}()
		go func() {
			defer wg.Done()
			<-start
			_, _, cancelEr = e.tk.Cancel(ctx, a.ID, tk.ID)
		}()
		go func() {
			defer wg.Done()
			<-start
			rep, repErr = e.ds.Reply(ctx, discussions.Author{ID: b.ID, Name: b.Name}, tk.DiscussionID, "answer")
		}()
		close(start)
		wg.Wait()
		if repErr != nil {
			t.Fatalf("round %d reply: %v", i, repErr)
		}
		if cancelEr != nil && !isErr(cancelEr, tasks.ErrNotCancelable) {
			t.Fatalf("round %d cancel: %v", i, cancelEr)
		}
		switch {
		case joinErr == nil:
			joinedFirst++
			if got := e.task(t, joined.ID); got.State != a2a.TaskStateCompleted || !slices.Contains(rep.CompletedTaskIDs, joined.ID) {
				t.Fatalf("round %d: the joined task is %s; a join that succeeded preceded the reply", i, got.State)
			}
		case isErr(joinErr, discussions.ErrAnswered):
			refused++
		default:
			t.Fatalf("round %d join: %v", i, joinErr)
		}
		// Alice's task is completed xor canceled, as the reply says.
		final := e.task(t, tk.ID)
		if (final.State == a2a.TaskStateCompleted) != slices.Contains(rep.CompletedTaskIDs, tk.ID) ||
			(final.State != a2a.TaskStateCompleted && final.State != a2a.TaskStateCanceled) {
			t.Fatalf("round %d: alice's task is %s, reply completed %v", i, final.State, rep.CompletedTaskIDs)
		}
	}
	t.Logf("%d rounds: %d joins before the reply, %d refused after it", rounds, joinedFirst, refused)
}
