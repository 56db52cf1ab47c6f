package search

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/discussions"
)

// An index built at start (none was there, or it could not follow the
// log) has every record at once, but not yet the discussions written
// before it was built: there may be a million of them, and the server
// must not wait for them before it serves. They are walked in the
// background, a page of 100 at a time, each page read and indexed under
// the index's write lock, so the follower applies the log between pages
// and a discussion the log names is never overwritten by an older read.
// The walk's place is kept with the index's position (appliedState), so
// a restart goes on from it. Until the walk ends, a search may miss a
// discussion written before the index was built; what is written after
// is indexed from the log at once, as always.

// startWalk walks the discussions in the background until it is done,
// Close, or the state no longer asks for it (a rebuild replaced it).
func (x *Index) startWalk() {
	x.walkMu.Lock()
	defer x.walkMu.Unlock()
	if x.walkCancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	x.walkCancel, x.walkDone = cancel, make(chan struct{})
	go x.walk(ctx, x.walkDone)
}

// stopWalk ends the walk and waits for it. The caller does not hold
// writeMu.
func (x *Index) stopWalk() {
	x.walkMu.Lock()
	cancel, done := x.walkCancel, x.walkDone
	x.walkMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// walked returns a channel closed when the walk running now (or the last
// one) has ended; nil when none ran.
func (x *Index) walked() <-chan struct{} {
	x.walkMu.Lock()
	defer x.walkMu.Unlock()
	return x.walkDone
}

func (x *Index) walk(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	start, pages := time.Now(), 0
	for {
		if x.o.walkHook != nil {
			x.o.walkHook(ctx, pages)
		}
		more, err := x.walkPage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				x.o.Log.Error("indexing the discussions failed; the next start goes on from here", "err", err.Error())
			}
			return
		}
		pages++
		if !more {
			x.o.Log.Info("discussions indexed", "discussions", x.discCount.Load(), "pages", pages,
				"took", time.Since(start).Round(time.Millisecond))
			return
		}
	}
}

// walkPage indexes the next page of discussions under writeMu and
// records where the walk stands, in the same batch.
func (x *Index) walkPage(ctx context.Context) (more bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.rec == nil {
		return false, ErrClosed
	}
	if !x.applied.Walking {
		return false, nil // a rebuild indexed them all
	}
	p, err := x.o.Discussions.ListDiscussions(ctx, discussions.ListQuery{PageSize: discussionPage, After: x.applied.WalkAfter})
	if err != nil {
		return false, fmt.Errorf("search: list discussions: %w", err)
	}
	b := x.rec.NewBatch()
	st := x.applied
	for _, d := range p.Discussions {
		replies, status := indexedState(x.rec, d.ID)
		if replies == d.VisibleReplies() && status == string(d.Status) {
			continue // the log got there first, or an earlier walk did
		}
		if replies < 0 {
			st.Discussions++
		}
		if err := x.addListed(ctx, b, d); err != nil {
			return false, err
		}
	}
	st.WalkAfter, st.Walking = p.Next, p.Next != ""
	b.SetInternal(keyFeed, st.encode())
	if err := x.rec.Batch(b); err != nil {
		return false, fmt.Errorf("search: index discussions: %w", err)
	}
	x.setApplied(st)
	return st.Walking, nil
}
