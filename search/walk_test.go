package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/knowledge"
)

// TestOpenDoesNotWaitForTheDiscussions: an index built over a database
// that already holds more discussions than one page opens at once, and
// walks them in the background, a page under the write lock at a time.
// Asks and replies made meanwhile are indexed from the log, on both sides
// of the walk's place; a walk stopped half way (Close) goes on from its
// place at the next Open; when it ends every discussion is indexed once.
func TestOpenDoesNotWaitForTheDiscussions(t *testing.T) {
	ctx := context.Background()
	f := setup(t, "")
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	c := newCommunity(t, f)
	// The walk goes newest first: oldest is on its last page, the others
	// on its first.
	oldest := c.ask(t, "Where does the okapi sleep at night?", "")
	for i := range 2*discussionPage + 10 {
		c.ask(t, fmt.Sprintf("Question number %d about nothing", i), "")
	}
	sloth := c.ask(t, "How slow is a sloth on a good day?", "")
	const asked = 2*discussionPage + 12
	if err := os.RemoveAll(filepath.Join(f.dir, "index")); err != nil {
		t.Fatal(err)
	}

	held := make(chan struct{})
	var pagesWalked int
	open := func(hold bool) *Index {
		idx, err := Open(ctx, Options{
			Dir: filepath.Join(f.dir, "index"), Changes: f.db, Records: f.db, Discussions: f.db,
			walkHook: func(ctx context.Context, pages int) {
				pagesWalked = pages
				if hold && pages == 1 {
					held <- struct{}{}
					<-ctx.Done() // until Close
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return idx
	}
	opened := make(chan *Index, 1)
	go func() { opened <- open(true) }()
	var idx *Index
	select {
	case idx = <-opened:
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("Open waits for the discussions")
	}
	<-held // after the first page

	// While it is held: replies to a discussion it has walked and to one
	// it has not, and a new ask, applied from the log.
	c.reply(t, c.other, sloth, "A few metres a minute.")
	c.reply(t, c.other, oldest, "In the forest.")
	fresh := c.ask(t, "What do aardvarks eat for breakfast?", "")
	if err := idx.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ q, want string }{
		{"how slow is a sloth on a good day", sloth},
		{"where does the okapi sleep at night", oldest},
		{"what do aardvarks eat for breakfast", fresh},
	} {
		if got := ids(searchQ(t, idx, knowledge.Query{Text: tt.q}).Hits); len(got) != 1 || got[0] != tt.want {
			t.Fatalf("during the walk, %q: %v, want %s", tt.q, got, tt.want)
		}
	}
	// Stopped after its first page: the next Open goes on from there
	// (two pages left of three), not from the first page.
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	idx = open(false)
	defer idx.Close()
	waitWalked(t, idx)
	if pagesWalked != 1 {
		t.Fatalf("the reopened index walked %d pages, want the 2 the first did not", pagesWalked+1)
	}
	res := searchQ(t, idx, knowledge.Query{Text: "where does the okapi sleep at night"})
	if len(res.Hits) != 1 || res.Hits[0].ID != oldest || res.Hits[0].Status != knowledge.StatusAnswered {
		t.Fatalf("after the walk: %+v, want %s answered", res.Hits, oldest)
	}
	st, err := idx.Status(ctx)
	if err != nil || st.Discussions != asked+1 {
		t.Fatalf("status %+v, %v; want %d discussions, each counted once", st, err, asked+1)
	}
	docs, _ := idx.rec.DocCount()
	if docs != uint64(asked+1) {
		t.Fatalf("%d documents, want %d", docs, asked+1)
	}
}
