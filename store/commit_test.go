package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
)

// A refusal decided before a write costs its batch nothing: with half of
// the calls refused inside their batch (asks over an open-task bound that
// batch-mates reach, each having passed the read-only pre-check), every
// batch is still one transaction and every write function runs once.
func TestRefusalsCostNoRerun(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	owners := testAgentsIn(t, db, 3)
	a := owners[0]
	ask := func(who int, msgID string, maxOpen int, at time.Time) tasks.CreateAsk {
		o := owners[who]
		text := "question " + msgID
		return tasks.NewAsk(tasks.AskInput{
			Asker:    tasks.Asker{ID: o.ID, Name: o.Name},
			Message:  a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
			Question: text,
		}, at, maxOpen)
	}
	const n = 60 // successes, and nearly as many refusals
	type call struct {
		name string
		do   func() error
	}
	var calls []call
	for i := range n {
		at := t0.Add(time.Minute + time.Duration(i)*time.Millisecond)
		calls = append(calls, call{fmt.Sprintf("ask %d", i), func() error {
			res, err := db.CreateAsk(ctx, ask(0, fmt.Sprint("ok-", i), 0, at))
			if err == nil && !res.Created {
				err = errors.New("not created")
			}
			return err
		}})
		// c may have one open task: all of these pass the pre-check (c has
		// none yet), the first to run in the batch gets it, the others are
		// refused there.
		calls = append(calls, call{fmt.Sprintf("bounded ask %d", i), func() error {
			_, err := db.CreateAsk(ctx, ask(2, fmt.Sprint("c-", i), 1, at))
			return err
		}})
	}

	// Queue every call behind a held writer, so that they share batches.
	queued := make(chan struct{}, len(calls))
	db.NotifyQueuedForTest(queued)
	release := db.HoldWriterForTest()
	batches0, txs0, runs0 := db.CommitCountsForTest()
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, cl := range calls {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = cl.do() }()
	}
	for range calls {
		<-queued
	}
	release()
	wg.Wait()

	bounded := 0
	for i, cl := range calls {
		switch {
		case i%2 == 0 && errs[i] != nil:
			t.Fatalf("%s: %v", cl.name, errs[i])
		case i%2 == 1 && errs[i] == nil:
			bounded++
		case i%2 == 1 && !errors.Is(errs[i], tasks.ErrTooManyOpen):
			t.Fatalf("%s: %v, want the bound", cl.name, errs[i])
		}
	}
	if bounded != 1 {
		t.Fatalf("%d bounded asks got through, want 1", bounded)
	}
	batches1, txs1, runs1 := db.CommitCountsForTest()
	batches, txs, runs := batches1-batches0, txs1-txs0, runs1-runs0
	t.Logf("%d calls: %d batches, %d transactions, %d runs", len(calls), batches, txs, runs)
	if txs != batches {
		t.Errorf("%d transactions for %d batches: refusals made the batch roll back and rerun", txs, batches)
	}
	if runs != uint64(len(calls)) {
		t.Errorf("%d write functions ran for %d calls", runs, len(calls))
	}
	page, err := db.ListTasks(ctx, tasks.ListQuery{OwnerID: a.ID, PageSize: 1})
	if err != nil || page.Total != n {
		t.Fatalf("a has %d tasks (%v), want %d", page.Total, err, n)
	}
	rep, err := db.Check(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep.Violations)
	}
}

// Refusals the state already decides (a cancel of a completed task, a
// reply on an unknown discussion, a join of an answered one) are answered
// from a read: they never reach the write queue.
func TestSettledRefusalsNeverQueue(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	owners := testAgentsIn(t, db, 2)
	done := testAsks(owners, 1)[0]
	if _, err := db.CreateAsk(ctx, done); err != nil {
		t.Fatal(err)
	}
	reply := func(disc string) discussions.Reply {
		return discussions.Reply{ID: ulid.MustNew(ulid.Timestamp(t0), ulid.DefaultEntropy()).String(), DiscussionID: disc,
			AuthorID: owners[1].ID, AuthorName: owners[1].Name, Body: "answer", CreatedAt: t0.Add(time.Second)}
	}
	if _, err := db.AddReply(ctx, reply(done.Task.DiscussionID), discussions.Limits{}); err != nil {
		t.Fatal(err)
	}
	join := testAsks(owners, 2)[1]
	join.Task.MessageID, join.JoinDiscussionID, join.Task.DiscussionID = "join", done.Task.DiscussionID, done.Task.DiscussionID
	_, _, runs0 := db.CommitCountsForTest()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"cancel of a completed task", func() error { _, _, err := db.CancelTask(ctx, "", done.Task.ID, t0); return err }(), tasks.ErrNotCancelable},
		{"reply on an unknown discussion", func() error {
			_, err := db.AddReply(ctx, reply("01JD0000000000000000000000"), discussions.Limits{})
			return err
		}(), discussions.ErrNotFound},
		{"join of an answered discussion", func() error { _, err := db.CreateAsk(ctx, join); return err }(), discussions.ErrAnswered},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if _, _, runs1 := db.CommitCountsForTest(); runs1 != runs0 {
		t.Fatalf("%d write functions ran for refusals the state had settled", runs1-runs0)
	}
}

// A function that writes and then claims a refusal is treated as a
// failure: its write is rolled back, never committed with the batch.
func TestRefusalAfterAWriteIsRolledBack(t *testing.T) {
	db := openTemp(t)
	bucket := []byte("refusal-test")
	if err := db.WriteForTest(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		t.Fatal(err)
	}
	no := errors.New("no")
	err := db.WriteForTest(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucket).Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		return store.RefuseForTest(no)
	})
	if !errors.Is(err, no) {
		t.Fatalf("got %v, want the refusal's error", err)
	}
	if err := db.WriteForTest(func(tx *bolt.Tx) error {
		if tx.Bucket(bucket).Get([]byte("k")) != nil {
			t.Error("the write before a refusal was committed")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
