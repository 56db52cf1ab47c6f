package search

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"

	"github.com/kfa-project/kfa/discussions"
)

// The reconcile walks every discussion (one cursor walk, a page at a
// time) and re-indexes those whose status or reply count differs from
// the indexed ones. It catches discussion writes the index did not see:
// made while no index ran, or committed just before a crash. On 1M
// discussions it takes tens of seconds, so it never delays Open: Open
// starts it in the background, and it takes writeMu for one page at a
// time, so the follower indexes new asks and replies between its pages.

// reconcilePage reconciles into idx the page of discussions after the
// cursor after, and returns the next cursor ("" at the end) and the
// counts of the page's discussions as the store holds them.
func (x *Index) reconcilePage(ctx context.Context, idx bleve.Index, after string) (string, discCounts, error) {
	p, err := x.o.Discussions.ListDiscussions(ctx, discussions.ListQuery{PageSize: discussionPage, After: after})
	if err != nil {
		return "", discCounts{}, fmt.Errorf("search: list discussions: %w", err)
	}
	var n discCounts
	b := idx.NewBatch()
	for _, d := range p.Discussions {
		n.all++
		if d.Status == discussions.StatusAnswered {
			n.answered++
		}
		if replies, status := indexedState(idx, d.ID); replies == d.ReplyCount && status == string(d.Status) {
			continue
		}
		if err := x.addDiscussion(ctx, b, d); err != nil {
			return "", discCounts{}, err
		}
	}
	if b.Size() > 0 {
		if err := idx.Batch(b); err != nil {
			return "", discCounts{}, fmt.Errorf("search: index discussions: %w", err)
		}
	}
	return p.Next, n, nil
}

// reconcileDiscussions reconciles every discussion into idx at once and
// returns the counts of the store's discussions. Rebuild uses it on the
// index it builds aside, which nothing else writes.
func (x *Index) reconcileDiscussions(ctx context.Context, idx bleve.Index) (discCounts, error) {
	var total discCounts
	after := ""
	for {
		next, n, err := x.reconcilePage(ctx, idx, after)
		if err != nil {
			return discCounts{}, err
		}
		total.all += n.all
		total.answered += n.answered
		if next == "" {
			return total, nil
		}
		after = next
	}
}

// reconcileState is how far a background reconcile has walked. The walk
// goes newest first, so the discussions it has passed are those from its
// cursor up, and any asked after it started; it will still read those
// below the cursor, as they are then.
type reconcileState struct {
	after string     // the last discussion walked; "" before the first page
	end   bool       // every page walked
	n     discCounts // the walked discussions, as indexed
}

// walked reports whether the walk has passed discussion id, so that a
// change the watch indexes there is counted in n (the walk counts the
// others itself when it reaches them).
func (r reconcileState) walked(id string) bool {
	return r.end || (r.after != "" && id >= r.after)
}

// startReconcile starts a reconcile of the live index in the background,
// unless one runs. The caller holds writeMu.
func (x *Index) startReconcile(ctx context.Context) {
	if x.reconciling || x.o.Discussions == nil {
		return
	}
	x.reconciling, x.rc = true, reconcileState{}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	x.recMu.Lock()
	if x.recCancel != nil {
		x.recCancel() // the last reconcile has ended: it frees its context
	}
	x.recCancel, x.recDone = cancel, done
	x.recMu.Unlock()
	go x.reconcileLive(ctx, done)
}

// reconcileLive walks the discussions into the live index, taking writeMu
// for one page at a time; between pages the follower indexes what the
// watch names. The indexed counts it ends with are exact: those of the
// walked pages, plus what the watch changed among the discussions the
// walk had passed. A write behind the watch during the walk therefore
// leaves them unequal to the store's, and the next count check starts
// another reconcile.
func (x *Index) reconcileLive(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	pages := 0
	for {
		if x.o.reconcileHook != nil {
			x.o.reconcileHook(pages)
		}
		last, err := x.reconcileStep(ctx)
		if err != nil {
			if ctx.Err() == nil {
				x.o.Log.Error("reconciling the discussions failed; retrying on the next tick", "err", err.Error())
			}
			return
		}
		if last {
			x.o.Log.Info("discussions reconciled", "discussions", x.discCount.Load(), "pages", pages+1)
			return
		}
		pages++
	}
}

// reconcileStep reconciles the next page under writeMu and, after the
// last, ends the reconcile. On an error the reconcile ends too, and the
// index stays stale so that the next sync starts another.
func (x *Index) reconcileStep(ctx context.Context) (last bool, err error) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	defer func() {
		if err != nil || last {
			x.reconciling = false
		}
	}()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if x.rec == nil {
		return false, ErrClosed
	}
	next, n, err := x.reconcilePage(ctx, x.rec, x.rc.after)
	if err != nil {
		return false, err
	}
	x.rc.n = x.rc.n.plus(n)
	if next != "" {
		x.rc.after = next
		return false, nil
	}
	x.rc.end = true
	if x.o.Watch != nil {
		ids := x.o.Watch.take()
		if err := x.indexDiscussions(ctx, ids); err != nil {
			for _, id := range ids {
				x.o.Watch.mark(id)
			}
			return false, err
		}
	}
	x.setDiscs(x.rc.n)
	x.stale = false
	return true, nil
}

// stopReconcile cancels a running reconcile and waits for it. The caller
// does not hold writeMu.
func (x *Index) stopReconcile() {
	x.recMu.Lock()
	cancel, done := x.recCancel, x.recDone
	x.recCancel, x.recDone = nil, nil
	x.recMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// reconciled returns a channel closed when the reconcile running now (or
// the last one) has ended; nil when none ever ran.
func (x *Index) reconciled() <-chan struct{} {
	x.recMu.Lock()
	defer x.recMu.Unlock()
	return x.recDone
}
