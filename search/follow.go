package search

import (
	"context"
	"time"
)

// Start runs the follower until ctx ends or Stop: it applies new feed
// entries and re-indexes discussions that got replies, when woken by
// Options.Written or the watch, and every Options.Tick in any case (one
// read transaction when nothing changed). Errors are logged and retried
// on the next wake-up. A second Start while running does nothing.
func (x *Index) Start(ctx context.Context) {
	x.runMu.Lock()
	defer x.runMu.Unlock()
	if x.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	x.cancel = cancel
	x.done = make(chan struct{})
	go x.follow(ctx, x.done)
}

// Stop ends the follower and waits for it. Stopping a stopped (or never
// started) index does nothing.
func (x *Index) Stop() {
	x.runMu.Lock()
	defer x.runMu.Unlock()
	if x.cancel == nil {
		return
	}
	x.cancel()
	<-x.done
	x.cancel, x.done = nil, nil
}

func (x *Index) follow(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(x.o.Tick)
	defer t.Stop()
	var watch <-chan struct{}
	if x.o.Watch != nil {
		watch = x.o.Watch.signal
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.o.Written:
		case <-watch:
		case <-t.C:
		}
		if err := x.Sync(ctx); err != nil && ctx.Err() == nil {
			x.o.Log.Error("search index update failed; retrying on the next change or tick", "err", err.Error())
		}
		if x.synced != nil {
			x.synced()
		}
	}
}

// Sync applies every committed record write and reply now, and returns
// once they are searchable. The admin import calls it, so an operator's
// import is searchable when the command returns.
func (x *Index) Sync(ctx context.Context) error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.rec == nil {
		return ErrClosed
	}
	if _, err := x.catchUp(ctx); err != nil {
		return err
	}
	return x.syncDiscussions(ctx)
}
