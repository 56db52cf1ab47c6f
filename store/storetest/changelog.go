package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// logLine is an event without its position and time, as tests compare it.
func logLine(e changelog.Event) string {
	return strings.TrimRight(fmt.Sprintf("%s %s %s %s", e.Kind, e.ID, e.Owner, e.Ref), " ")
}

// readAll reads the log after from in pages of size, checking that
// positions grow.
func readAll(t *testing.T, l changelog.Log, after changelog.Position, size int) []changelog.Event {
	t.Helper()
	Settle(t, l)
	var out []changelog.Event
	for {
		page, err := l.ReadLog(context.Background(), after, size)
		if err != nil {
			t.Fatalf("ReadLog after %v: %v", after, err)
		}
		for _, e := range page {
			if !after.Before(e.Pos) {
				t.Fatalf("event %s at %v does not come after %v", logLine(e), e.Pos, after)
			}
			after = e.Pos
		}
		out = append(out, page...)
		if len(page) < size {
			return out
		}
	}
}

// testChangeLog: every committed change appends its events, in commit
// order, at growing positions; refused commands append nothing.
func testChangeLog(t *testing.T, open Opener) {
	e := newPushEnv(t, open)
	ctx := context.Background()
	l := e.store.(changelog.Log)
	Settle(t, l)
	start, err := l.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wake, stop := l.WakeLog()
	defer stop()

	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk := e.ask(t, a, "m1")
	e.config(t, a, tk.ID, "c1", "https://hooks.example.com/1")
	joined := e.join(t, b, "m2", tk.DiscussionID)
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after commits that appended events")
	}
	rep := e.reply(t, b, tk.DiscussionID, "an answer")
	// Refused: a cancel of a completed task, an ask of an unknown discussion.
	if _, _, err := e.tk.Cancel(ctx, a.ID, tk.ID); err == nil {
		t.Fatal("cancel of a completed task succeeded")
	}
	bad := askInput(a, "m3", "")
	bad.JoinDiscussionID = "01JD0000000000000000000000"
	if _, _, err := e.tk.Ask(ctx, bad); err == nil {
		t.Fatal("join of an unknown discussion succeeded")
	}
	other := e.ask(t, a, "m4")
	if _, _, err := e.tk.Cancel(ctx, a.ID, other.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.Rotate(ctx, a.ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.Revoke(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ag.Revoke(ctx, b.ID); err != nil { // already revoked: no change, no event
		t.Fatal(err)
	}
	if ks, ok := e.store.(knowledge.Store); ok {
		if _, err := ks.UpsertRecords(ctx, []knowledge.Record{{ID: "r1", Kind: "fix", Title: "t", Body: "b"}}, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := ks.DeleteRecord(ctx, "r1", e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}

	evs := readAll(t, l, start.Last, 3)
	var got []string
	for _, ev := range evs {
		got = append(got, logLine(ev))
	}
	done := string(a2a.TaskStateCompleted)
	want := []string{
		"agent.created " + a.ID,
		"agent.created " + b.ID,
		"task.created " + tk.ID + " " + a.ID + " " + tk.DiscussionID,
		"discussion.opened " + tk.DiscussionID + " " + a.ID,
		"task.created " + joined.ID + " " + b.ID + " " + tk.DiscussionID,
		"discussion.replied " + tk.DiscussionID + " " + b.ID + " " + rep.Reply.ID,
		"task.moved " + tk.ID + " " + a.ID + " " + done,
	}
	// The completed task had one push config: one delivery became due.
	if len(evs) < len(want)+1 || evs[len(want)].Kind != changelog.DeliveryDue || evs[len(want)].Owner != a.ID ||
		evs[len(want)].Ref != "https://hooks.example.com:443" {
		t.Fatalf("log:\n%s\nwant a delivery.due for %s's config after the completion", strings.Join(got, "\n"), a.ID)
	}
	want = append(want, logLine(evs[len(want)]),
		"task.created "+other.ID+" "+a.ID+" "+other.DiscussionID,
		"discussion.opened "+other.DiscussionID+" "+a.ID,
		"task.moved "+other.ID+" "+a.ID+" "+string(a2a.TaskStateCanceled),
		"agent.rotated "+a.ID,
		"agent.revoked "+b.ID,
	)
	if _, ok := e.store.(knowledge.Store); ok {
		want = append(want, "record.upserted r1", "record.deleted r1")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	end, err := l.LogState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if end.Last != evs[len(evs)-1].Pos || end.Epoch == "" || end.Epoch != start.Epoch {
		t.Fatalf("state %+v, want Last %v and the same epoch as %+v", end, evs[len(evs)-1].Pos, start)
	}
	// A read names the event it reads after, so that a follower can tell
	// whether the log still holds the event it read there (Tail.At).
	mid := evs[len(evs)/2]
	if tail, err := l.ReadTail(ctx, mid.Pos, 1); err != nil || tail.At.Pos != mid.Pos || tail.At.Kind != mid.Kind || tail.At.ID != mid.ID {
		t.Fatalf("read after %v: At %+v, %v; want the event there, %+v", mid.Pos, tail.At, err, mid)
	}
	if tail, err := l.ReadTail(ctx, changelog.Position{}, 1); err != nil || tail.At != (changelog.Event{}) {
		t.Fatalf("read from the start: At %+v, %v; want none", tail.At, err)
	}
	if more, err := l.ReadLog(ctx, end.Last, 10); err != nil || len(more) != 0 {
		t.Fatalf("read after the last: %v, %v", more, err)
	}
}
