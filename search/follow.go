package search

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/changelog"
)

// The index follows the change log (changelog.Runner): each batch of
// events names the records and discussions that changed, each once
// however many events name it, and the index reads them as they are now
// and indexes them, with the position of the batch's last event in the
// same bleve batch as the last documents. A batch applied again (after a
// crash between indexing and the position reaching the disk, or a failed
// batch retried) indexes the same documents under the same ids: the
// index never holds a document twice. Events at or before the index's
// position are skipped, so a rebuild that went past the follower costs
// nothing.

// cursorName is the index's durable cursor in the store.
const cursorName = "search-index"

// followGap is the least time between two of the follower's passes. Each
// pass makes an index segment, which bleve merges later: under a stream
// of asks, a pass per commit made a segment per ask or two, and the
// merges took a fifth of the server's CPU (issue 24). A pass also costs
// bleve a fixed amount (a segment's dictionaries and bitmaps, a snapshot
// introduced), so fewer, larger passes cost less per ask: 250 ms instead
// of 50 took BenchmarkFollowAsks from 51 to 40 KB allocated per ask
// (issue 32). It adds at most that to when a write is searchable under a
// stream of writes (a write after a quiet moment is indexed at once),
// far under the second allowed.
const followGap = 250 * time.Millisecond

// Start follows the change log until ctx ends or Stop: it applies new
// events when the log wakes it, and every Options.Tick in any case (one
// read when nothing changed). Errors are logged and retried. A second
// Start while running does nothing.
func (x *Index) Start(ctx context.Context) {
	x.runMu.Lock()
	defer x.runMu.Unlock()
	if x.runner != nil {
		return
	}
	o := changelog.RunnerOptions{
		Name: "search index", From: func(context.Context) (changelog.Position, error) { return x.Applied(), nil },
		Tick: x.o.Tick, Batch: x.o.BatchSize, Gap: followGap, Log: x.o.Log,
	}
	if x.o.gap != 0 {
		o.Gap = max(x.o.gap, 0)
	}
	if x.o.Cursors != nil {
		o.Cursors, o.Name = x.o.Cursors, cursorName+":"+x.instance()
	}
	r := changelog.NewRunner(x.o.Changes, follower{x}, o)
	if err := r.Start(ctx); err != nil { // From cannot fail
		x.o.Log.Error("search index follower did not start", "err", err.Error())
		return
	}
	x.runner = r
}

// Stop ends the follower and waits for it. Stopping a stopped (or never
// started) index does nothing.
func (x *Index) Stop() {
	x.runMu.Lock()
	r := x.runner
	x.runner = nil
	x.runMu.Unlock()
	if r != nil {
		r.Stop()
	}
}

// Sync returns once every write committed before it was called is
// searchable. The admin import calls it, so an operator's import is
// searchable when the command returns.
func (x *Index) Sync(ctx context.Context) error {
	x.runMu.Lock()
	r := x.runner
	x.runMu.Unlock()
	if r != nil {
		return r.Sync(ctx)
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.rec == nil {
		return ErrClosed
	}
	_, err := x.catchUp(ctx)
	return err
}

// WaitPast returns once the follower has applied the log's event at p
// (or one after it), without asking it for a pass as Sync does: only a
// wake-up or the tick brings it. ErrClosed when the follower is not
// running.
func (x *Index) WaitPast(ctx context.Context, p changelog.Position) error {
	x.runMu.Lock()
	r := x.runner
	x.runMu.Unlock()
	if r == nil {
		return ErrClosed
	}
	return r.WaitPast(ctx, p)
}

// Follower is the index as a changelog.Follower, for a caller that runs
// it itself (Start runs it in a runner of its own).
func (x *Index) Follower() changelog.Follower { return follower{x} }

// follower is the index's changelog.Follower and changelog.Resetter.
type follower struct{ x *Index }

// Apply implements changelog.Follower.
func (f follower) Apply(ctx context.Context, evs []changelog.Event) error {
	x := f.x
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.rec == nil {
		return ErrClosed
	}
	return x.apply(ctx, evs)
}

// Reset implements changelog.Resetter: the log no longer holds the events
// after the index's position, so it is built again.
func (f follower) Reset(ctx context.Context, reason string) (changelog.Position, error) {
	if _, err := f.x.rebuild(ctx, reason); err != nil {
		return changelog.Position{}, err
	}
	return f.x.Applied(), nil
}

// catchUp applies the log from the index's position to its end, a batch
// at a time, and returns how many events it read. The caller holds
// writeMu.
func (x *Index) catchUp(ctx context.Context) (int, error) {
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		tail, err := x.o.Changes.ReadTail(ctx, x.applied.Pos, x.o.BatchSize)
		if err != nil {
			return total, fmt.Errorf("search: read the change log after %s: %w", x.applied.Pos, err)
		}
		if x.applied.Pos.Before(tail.Trimmed) {
			return total, fmt.Errorf("search: the change log was trimmed up to %s, past the index's position %s", tail.Trimmed, x.applied.Pos)
		}
		if len(tail.Events) == 0 {
			return total, nil
		}
		if err := x.apply(ctx, tail.Events); err != nil {
			return total, err
		}
		total += len(tail.Events)
		if len(tail.Events) < x.o.BatchSize {
			return total, nil
		}
	}
}

// apply indexes what evs changed and moves the index's position to the
// last of them. The caller holds writeMu.
func (x *Index) apply(ctx context.Context, evs []changelog.Event) error {
	for len(evs) > 0 && !x.applied.Pos.Before(evs[0].Pos) {
		evs = evs[1:]
	}
	if len(evs) == 0 {
		return nil
	}
	if x.o.applyHook != nil {
		if err := x.o.applyHook("before", evs); err != nil {
			return err
		}
	}
	var recs, discs, authors idSet
	changed := map[string]bool{} // discussions to index again even when their counts did not move
	for _, e := range evs {
		switch e.Kind {
		case changelog.RecordUpserted, changelog.RecordDeleted:
			recs.add(e.ID)
		case changelog.DiscussionOpened, changelog.DiscussionReplied:
			discs.add(e.ID)
		case changelog.DiscussionChanged:
			discs.add(e.ID)
			changed[e.ID] = true
		case changelog.ItemHidden, changelog.ItemUnhidden:
			discs.add(e.Ref) // the discussion, or the hidden reply's
			changed[e.Ref] = true
			authors.add(e.Owner) // whose reputation it moved
		case changelog.ItemVoted, changelog.ItemVerified:
			if e.Ref == "" {
				recs.add(e.ID) // a record's signals
			} else {
				discs.add(e.Ref) // a reply's: its discussion's answer may change
				changed[e.Ref] = true
			}
			authors.add(e.Note)
		case changelog.ReputationReset:
			authors.add(e.ID)
		}
	}
	last := evs[len(evs)-1]
	st := x.applied
	st.Pos, st.Kind, st.ID = last.Pos, last.Kind, last.ID
	if err := x.indexRecords(ctx, recs.list); err != nil {
		return err
	}
	keys, purged := followedEvents(evs)
	if len(purged) > 0 {
		n, err := x.purgeFollowed(ctx, purged)
		if err != nil {
			return err
		}
		st.Followed = max(0, st.Followed-n)
	}
	b := x.rec.NewBatch()
	n, err := x.indexDiscussions(ctx, b, discs.list, changed)
	if err != nil {
		return err
	}
	st.Discussions += n
	nf, err := x.indexFollowed(ctx, b, keys.list)
	if err != nil {
		return err
	}
	st.Followed = max(0, st.Followed+nf)
	if err := x.refreshReputations(ctx, b, authors.list); err != nil {
		return err
	}
	b.SetInternal(keyFeed, st.encode())
	if err := x.rec.Batch(b); err != nil {
		return fmt.Errorf("search: index the events %s to %s: %w", evs[0].Pos, last.Pos, err)
	}
	x.setApplied(st)
	if x.o.applyHook != nil {
		if err := x.o.applyHook("after", evs); err != nil {
			return err
		}
	}
	if x.pending >= persistBatches*x.o.BatchBytes {
		x.pending = 0
		return x.markPersisted(st)
	}
	return nil
}

// idSet is a list of ids without repeats, in the order first named.
type idSet struct {
	list []string
	seen map[string]struct{}
}

func (s *idSet) add(id string) {
	if id == "" {
		return
	}
	if s.seen == nil {
		s.seen = map[string]struct{}{}
	}
	if _, ok := s.seen[id]; ok {
		return
	}
	s.seen[id] = struct{}{}
	s.list = append(s.list, id)
}

// instance names this index among the indexes that follow one log (one
// per process): a random id made with the index and kept in it.
func (x *Index) instance() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.rec == nil {
		return "closed"
	}
	v, err := x.rec.GetInternal(keyInstance)
	if err != nil || len(v) == 0 {
		return "unnamed"
	}
	return string(v)
}
