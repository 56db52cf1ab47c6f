package search

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/knowledge"
)

// TestOpenDoesNotWaitForTheReconcile: with more discussions than one
// reconcile page, Open returns while the reconcile is held after its
// first page (the newest discussions). Asks and replies made meanwhile
// are indexed through the watch, on both sides of the walk's cursor, and
// the count check starts no second reconcile; when the held one ends
// every discussion is indexed and the counts are the index's own, so
// that a reply written behind the watch during the walk, to a discussion
// it had passed, starts another reconcile.
func TestOpenDoesNotWaitForTheReconcile(t *testing.T) {
	ctx := context.Background()
	f := setup(t, "")
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	w := NewDiscussionWatch()
	c := newCommunity(f, w)
	// Written while no index ran: only the reconcile finds them. The walk
	// goes newest first: oldest is on its last page, the others on its
	// first.
	oldest := c.ask(t, "Where does the okapi sleep at night?", "")
	for i := range 2*discussionPage + 10 {
		c.ask(t, fmt.Sprintf("Question number %d about nothing", i), "")
	}
	behind := c.ask(t, "Do wombats dig burrows in the rain?", "")
	tapir := c.ask(t, "Why does the tapir hum?", "")
	c.reply(t, c.other, tapir, "It is content.")
	sloth := c.ask(t, "How slow is a sloth on a good day?", "")
	const asked = 2*discussionPage + 14
	w.take() // as if asked while no server ran

	held, release := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	opened := make(chan error, 1)
	go func() {
		idx, err := Open(ctx, Options{
			Dir: filepath.Join(f.dir, "index"), Records: f.db, Discussions: f.db, Watch: w,
			reconcileHook: func(pages int) {
				if pages == 1 && once.CompareAndSwap(false, true) { // the first reconcile only
					held <- struct{}{}
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

	// While it is held: replies through the watch to a discussion it has
	// walked and to one it has not, a new ask, and a reply behind the
	// watch; then a sync with its count check.
	c.reply(t, c.other, sloth, "A few metres a minute.")
	c.reply(t, c.other, oldest, "In the forest.")
	fresh := c.ask(t, "What do aardvarks eat for breakfast?", "")
	unwatched := newCommunity(f, NewDiscussionWatch())
	unwatched.reply(t, unwatched.other, behind, "Only when it is dry.")
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if f.idx.reconciled() != running {
		t.Fatal("the count check started a second reconcile while one ran")
	}
	for _, tt := range []struct{ q, want string }{
		{"how slow is a sloth on a good day", sloth},
		{"where does the okapi sleep at night", oldest},
		{"what do aardvarks eat for breakfast", fresh},
	} {
		if got := ids(searchQ(t, f.idx, knowledge.Query{Text: tt.q}).Hits); len(got) != 1 || got[0] != tt.want {
			t.Fatalf("during the reconcile, %q: %v, want %s", tt.q, got, tt.want)
		}
	}

	close(release)
	waitReconciled(t, f.idx)
	res := searchQ(t, f.idx, knowledge.Query{Text: "why does the tapir hum"})
	if len(res.Hits) != 1 || res.Hits[0].ID != tapir || res.Hits[0].Status != knowledge.StatusAnswered {
		t.Fatalf("after the reconcile: %+v, want %s answered", res.Hits, tapir)
	}
	// Indexed: every discussion, answered the tapir, sloth and okapi; not
	// the wombat's answer, written behind the watch after the walk passed.
	if got, stale := indexedCounts(f.idx); got != (discCounts{all: asked + 1, answered: 3}) || stale {
		t.Fatalf("indexed counts %+v (stale %v), want %d discussions, 3 answered", got, stale, asked+1)
	}
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	second := f.idx.reconciled()
	if second == running {
		t.Fatal("the counts differ from the store's, yet the sync started no reconcile")
	}
	waitReconciled(t, f.idx)
	res = searchQ(t, f.idx, knowledge.Query{Text: "do wombats dig burrows in the rain"})
	if len(res.Hits) != 1 || res.Hits[0].ID != behind || res.Hits[0].Status != knowledge.StatusAnswered {
		t.Fatalf("after the second reconcile: %+v, want %s answered", res.Hits, behind)
	}
	if got, _ := indexedCounts(f.idx); got != (discCounts{all: asked + 1, answered: 4}) {
		t.Fatalf("indexed counts %+v after the second reconcile", got)
	}
	// The counts agree with the store's: the next sync starts nothing.
	if err := f.idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if f.idx.reconciled() != second {
		t.Fatal("a sync with equal counts started another reconcile")
	}
	st, err := f.idx.Status(ctx)
	if err != nil || st.Discussions != asked+1 || st.Records != 0 {
		t.Fatalf("status %+v, %v", st, err)
	}
}

func indexedCounts(x *Index) (discCounts, bool) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	return x.discs, x.stale
}
