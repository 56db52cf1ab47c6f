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
// the calls refused (a cancel of a completed task, a reply on an unknown
// discussion, an ask over the open-task bound), every batch is still one
// transaction and every write function runs once.
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
	reply := func(who int, discID string, at time.Time) discussions.Reply {
		return discussions.Reply{ID: ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()).String(), DiscussionID: discID,
			AuthorID: owners[who].ID, AuthorName: owners[who].Name, Body: "answer", CreatedAt: at}
	}
	// A completed task of a's, and c at its bound of one open task.
	done, _, err := db.CreateAsk(ctx, ask(0, "done", 0, t0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddReply(ctx, reply(1, done.DiscussionID, t0.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CreateAsk(ctx, ask(2, "c-open", 1, t0)); err != nil {
		t.Fatal(err)
	}

	const n = 60 // successes, and as many refusals
	type call struct {
		name string
		do   func() error
		want error // nil for a success
	}
	var calls []call
	for i := range n {
		at := t0.Add(time.Minute + time.Duration(i)*time.Millisecond)
		calls = append(calls, call{fmt.Sprintf("ask %d", i), func() error {
			_, created, err := db.CreateAsk(ctx, ask(0, fmt.Sprint("ok-", i), 0, at))
			if err == nil && !created {
				err = errors.New("not created")
			}
			return err
		}, nil})
		switch i % 3 {
		case 0:
			calls = append(calls, call{fmt.Sprintf("cancel completed %d", i), func() error {
				_, _, err := db.CancelTask(ctx, a.ID, done.ID, at)
				return err
			}, tasks.ErrNotCancelable})
		case 1:
			calls = append(calls, call{fmt.Sprintf("reply on unknown %d", i), func() error {
				_, err := db.AddReply(ctx, reply(1, "01JD0000000000000000000000", at))
				return err
			}, discussions.ErrNotFound})
		default:
			calls = append(calls, call{fmt.Sprintf("ask over the bound %d", i), func() error {
				_, _, err := db.CreateAsk(ctx, ask(2, fmt.Sprint("c-", i), 1, at))
				return err
			}, tasks.ErrTooManyOpen})
		}
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

	for i, cl := range calls {
		if cl.want == nil && errs[i] != nil || cl.want != nil && !errors.Is(errs[i], cl.want) {
			t.Fatalf("%s: %v, want %v", cl.name, errs[i], cl.want)
		}
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
	if err != nil || page.Total != n+1 {
		t.Fatalf("a has %d tasks (%v), want %d", page.Total, err, n+1)
	}
	rep, err := db.Check(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep.Violations)
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
	_ = db.WriteForTest(func(tx *bolt.Tx) error {
		if tx.Bucket(bucket).Get([]byte("k")) != nil {
			t.Error("the write before a refusal was committed")
		}
		return nil
	})
}
