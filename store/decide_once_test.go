package store

import (
	"context"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/tasks"
)

// newAsk is an ask of a with message id msgID, made at.
func newAsk(a agents.Agent, msgID string, at time.Time) tasks.CreateAsk {
	text := "question " + msgID
	return tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: a.ID, Name: a.Name}, Question: text,
		Message: a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}, at, 0)
}

// readDecided is an ask decided in a read transaction, as execOnce
// decides it before it queues, to be handed to the writer later.
type readDecided struct {
	c     tasks.CreateAsk
	recs  askRecords
	st    asknet.AskState
	out   asknet.AskOutcome
	cmd   command
	write func(*bolt.Tx) error
	seen  int
}

func decideInRead(t *testing.T, db *DB, c tasks.CreateAsk) *readDecided {
	t.Helper()
	d := &readDecided{c: c}
	d.cmd = db.askCommand(&d.c, &d.recs, nil, &d.st, &d.out)
	err := db.db.View(func(tx *bolt.Tx) error {
		var err error
		d.write, err = decide(d.cmd, tx)
		d.seen = tx.ID()
		return err
	})
	if err != nil || d.write == nil {
		t.Fatalf("the read decided %v, write %v: want a new task", err, d.write != nil)
	}
	return d
}

// commit hands d to the writer as execOnce does, and returns the ask's
// result.
func (d *readDecided) commit(db *DB) (tasks.AskResult, error) {
	if err := db.commits.doDecided(d.cmd, d.write, d.seen); err != nil {
		return tasks.AskResult{}, err
	}
	return askResult(&d.st, &d.out), nil
}

// An ask that finds the writer free is decided once: the writer runs the
// write its read decided.
func TestAskDecidedOnce(t *testing.T) {
	w := newWorld(t)
	_, _, runs0 := w.db.CommitCountsForTest()
	reused0 := w.db.commits.reused.Load()
	res, err := w.db.CreateAsk(context.Background(), newAsk(w.alice, "m-once", w.waiting.CreatedAt.Add(time.Hour)))
	if err != nil || !res.Created {
		t.Fatalf("ask: %+v %v", res, err)
	}
	_, _, runs1 := w.db.CommitCountsForTest()
	if runs, reused := runs1-runs0, w.db.commits.reused.Load()-reused0; runs != 0 || reused != 1 {
		t.Fatalf("the writer decided %d times and reused %d decisions, want 0 and 1", runs, reused)
	}
	if rep, err := w.db.Check(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("check: %v\n%s", err, dump(rep))
	}
}

// A write committed between an ask's read decision and its write makes
// the writer decide again: here a retry of the same message id committed
// meanwhile, so the ask is answered with that task, and no second task
// of the message id is written. Reusing the read's stale decision would
// write one.
func TestStaleDecisionAfterACommitIsNotReused(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	at := w.waiting.CreatedAt.Add(time.Hour)
	first := decideInRead(t, w.db, newAsk(w.alice, "m-race", at))
	other, err := w.db.CreateAsk(ctx, newAsk(w.alice, "m-race", at.Add(time.Millisecond)))
	if err != nil || !other.Created {
		t.Fatalf("the concurrent ask: %+v %v", other, err)
	}
	reused0 := w.db.commits.reused.Load()
	res, err := first.commit(w.db)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Task.ID != other.Task.ID {
		t.Fatalf("the ask decided before the commit: created %v, task %s; want the retry's answer, task %s",
			res.Created, res.Task.ID, other.Task.ID)
	}
	if n := w.db.commits.reused.Load() - reused0; n != 0 {
		t.Fatalf("%d stale decisions reused", n)
	}
	if rep, err := w.db.Check(ctx); err != nil || !rep.OK() {
		t.Fatalf("check: %v\n%s", err, dump(rep))
	}
}

// Two asks decided on the same read state, sharing one batch: the first
// runs as decided, the second is decided again on the first's writes
// (here: the same message id, so it is a retry). Reusing the second's
// read decision would write a second task of the message id.
func TestStaleDecisionInTheBatchIsNotReused(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	at := w.waiting.CreatedAt.Add(time.Hour)
	one := decideInRead(t, w.db, newAsk(w.alice, "m-batch", at))
	two := decideInRead(t, w.db, newAsk(w.alice, "m-batch", at.Add(time.Millisecond)))
	if one.seen != two.seen {
		t.Fatalf("the reads saw transactions %d and %d", one.seen, two.seen)
	}
	// Both wait before the writer takes its batch, so they share it.
	hold, queued := make(chan struct{}), make(chan struct{}, 2)
	w.db.commits.hold, w.db.commits.queued = hold, queued
	reused0 := w.db.commits.reused.Load()
	results := make([]tasks.AskResult, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, d := range []*readDecided{one, two} {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], errs[i] = d.commit(w.db) }()
		<-queued // in order: one first
	}
	close(hold)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if !results[0].Created || results[1].Created || results[1].Task.ID != results[0].Task.ID {
		t.Fatalf("results: created %v, %v; tasks %s, %s: want the second a retry of the first",
			results[0].Created, results[1].Created, results[0].Task.ID, results[1].Task.ID)
	}
	if n := w.db.commits.reused.Load() - reused0; n != 1 {
		t.Fatalf("%d decisions reused, want the first's only", n)
	}
	if rep, err := w.db.Check(ctx); err != nil || !rep.OK() {
		t.Fatalf("check: %v\n%s", err, dump(rep))
	}
}
