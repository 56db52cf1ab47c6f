package search

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/knowledge"
)

// TestOpenDoesNotWaitForTheReconcile: with more discussions than one
// reconcile page, Open returns while the reconcile is held after its
// first page; asks and replies made meanwhile are indexed through the
// watch, the count check starts no second reconcile, and when the held
// one ends every discussion is indexed and the counts are the store's.
func TestOpenDoesNotWaitForTheReconcile(t *testing.T) {
	ctx := context.Background()
	f := setup(t, "")
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	w := NewDiscussionWatch()
	c := newCommunity(f, w)
	// Written while no index ran: only the reconcile finds them.
	first := c.ask(t, "Where does the okapi sleep at night?", "")
	for i := range 2*discussionPage + 10 {
		c.ask(t, fmt.Sprintf("Question number %d about nothing", i), "")
	}
	last := c.ask(t, "Why does the tapir hum?", "")
	c.reply(t, c.other, last, "It is content.")

	held, release := make(chan int), make(chan struct{})
	opened := make(chan error, 1)
	go func() {
		idx, err := Open(ctx, Options{
			Dir: filepath.Join(f.dir, "index"), Records: f.db, Discussions: f.db, Watch: w,
			reconcileHook: func(pages int) {
				if pages == 1 {
					held <- pages
					<-release
				}
			},
		})
		f.idx = idx
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("Open waits for the discussions reconcile")
	}
	t.Cleanup(func() { _ = f.idx.Close() })
	<-held
	running := f.idx.reconciled()
	select {
	case <-running:
		t.Fatal("the reconcile ended while held")
	default:
	}

	// While it is held: a reply to a discussion it walked and a new ask,
	// through the watch, then a sync with its count check.
	c.reply(t, c.other, first, "In the forest.")
	fresh := c.ask(t, "What do aardvarks eat for breakfast?", "")
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if f.idx.reconciled() != running {
		t.Fatal("the count check started a second reconcile while one ran")
	}
	for _, tt := range []struct{ q, want string }{
		{"where does the okapi sleep at night", first},
		{"what do aardvarks eat for breakfast", fresh},
	} {
		if got := ids(searchQ(t, f.idx, knowledge.Query{Text: tt.q}).Hits); len(got) != 1 || got[0] != tt.want {
			t.Fatalf("during the reconcile, %q: %v, want %s", tt.q, got, tt.want)
		}
	}

	close(release)
	waitReconciled(t, f.idx)
	res := searchQ(t, f.idx, knowledge.Query{Text: "why does the tapir hum"})
	if len(res.Hits) != 1 || res.Hits[0].ID != last || res.Hits[0].Status != knowledge.StatusAnswered {
		t.Fatalf("after the reconcile: %+v, want %s answered", res.Hits, last)
	}
	st, err := f.idx.Status(ctx)
	if want := 2*discussionPage + 13; err != nil || st.Discussions != want {
		t.Fatalf("status %+v, %v; want %d discussions", st, err, want)
	}
	f.idx.writeMu.Lock()
	got, stale := f.idx.discs, f.idx.stale
	f.idx.writeMu.Unlock()
	if want := (discCounts{all: 2*discussionPage + 13, answered: 2}); got != want || stale {
		t.Fatalf("indexed counts %+v (stale %v), want %+v", got, stale, want)
	}
	// The counts agree with the store's: the next sync starts nothing.
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if f.idx.reconciled() != running {
		t.Fatal("a sync after the reconcile started another")
	}
}
