package search

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/markdown"
	"github.com/kfa-project/kfa/trust"
)

// buildWorkers is how many batches a full build indexes at once, and
// buildBatch how many records go in each. Measured over 100,000 generated
// records on two CPUs: two workers of 1,000 took 34s, one worker 49s; 2,500
// per batch saved 8% for twice the memory.
const buildWorkers, buildBatch = 2, DefaultBatchSize

// readChunk is how many records one read asks the store for while
// following: small, so that a chunk of the largest records (1 MiB each)
// stays a bounded amount of memory.
const readChunk = 64

// recordDocOf is record r with its signals (from b).
func recordDocOf(r *knowledge.Record, b trust.Board) recordDoc {
	return recordDoc{
		Title: r.Title, Body: markdown.Text(r.Body), Details: r.Body, Tags: r.Tags, Kind: r.Kind, Product: r.Product,
		Environment: r.Environment, URL: r.URL, Updated: knowledge.FormatTime(r.UpdatedAt),
		Source: string(knowledge.SourceRecord), UpdatedMS: float64(r.UpdatedAt.UnixMilli()),
		Signals: signalsDocOf(b.Of(trust.RecordItem(r.ID)).Tally).encode(),
	}
}

// recordBoard reads the signals of recs (one read).
func (x *Index) recordBoard(ctx context.Context, recs []*knowledge.Record) (trust.Board, error) {
	items := make([]trust.Item, 0, len(recs))
	for _, r := range recs {
		if r != nil {
			items = append(items, trust.RecordItem(r.ID))
		}
	}
	return x.board(ctx, items, nil)
}

// change is a record to index as it is now (nil when it is gone), with
// its signals.
type change struct {
	id    string
	rec   *knowledge.Record
	board trust.Board
}

// indexRecords reads the records ids as they are now and indexes them
// (or removes those gone). It reads a chunk at a time until it holds two
// batches' worth (2×BatchSize records, 2×BatchBytes of them), then
// indexes them in batches of at most BatchSize records and BatchBytes
// bytes (see batches), two at once: the ids are distinct, so the batches
// never touch one document. Memory is so bounded by bytes whatever the
// records' sizes. The caller holds writeMu.
func (x *Index) indexRecords(ctx context.Context, recIDs []string) error {
	for len(recIDs) > 0 {
		var group []change
		size := 0
		for len(recIDs) > 0 && len(group) < 2*x.o.BatchSize && size < 2*x.o.BatchBytes {
			n := min(readChunk, len(recIDs), 2*x.o.BatchSize-len(group))
			recs, err := x.o.Records.GetRecords(ctx, recIDs[:n])
			if err != nil {
				return fmt.Errorf("search: read records: %w", err)
			}
			board, err := x.recordBoard(ctx, recs)
			if err != nil {
				return err
			}
			for i, r := range recs {
				group = append(group, change{id: recIDs[i], rec: r, board: board})
				if r != nil {
					size += r.Size()
				}
			}
			recIDs = recIDs[n:]
		}
		if err := x.applyAll(batches(group, x.o.BatchSize, x.o.BatchBytes)); err != nil {
			return err
		}
		x.pending += size
		if x.pending >= persistBatches*x.o.BatchBytes && len(recIDs) > 0 {
			x.pending = 0
			if err := x.markPersisted(x.applied); err != nil {
				return err
			}
		}
	}
	return nil
}

// persistBatches is how many batches' bytes (Options.BatchBytes) the
// follower indexes between two persistence marks.
const persistBatches = 16

// markPersisted bounds what the index holds in memory. Batches return
// once searchable, before they reach the disk, and bleve keeps what is
// not on disk in memory with no bound of its own, so a long backlog (an
// import) could outrun the disk. Every persistBatches batches' bytes, the
// follower waits until the previous mark reached the disk, then sets a
// new one (the position st, with a callback once persisted): at most two
// marks' worth of records is in memory, and indexing goes on while the
// disk catches up with the last mark.
func (x *Index) markPersisted(st appliedState) error {
	if x.persisted != nil {
		select {
		case err := <-x.persisted:
			if err != nil {
				return fmt.Errorf("search: write the index: %w", err)
			}
		case <-time.After(flushTimeout):
			return fmt.Errorf("search: the index did not reach the disk within %s", flushTimeout)
		}
		x.persisted = nil
	}
	done := make(chan error, 1)
	b := x.rec.NewBatch()
	b.SetInternal(keyFeed, st.encode())
	b.SetPersistedCallback(func(err error) { done <- err })
	if err := x.rec.Batch(b); err != nil {
		return err
	}
	x.persisted = done
	return nil
}

// batches splits changes, in order, into index batches of at most size
// records and maxBytes of them (knowledge.Record.Size; a removal counts
// nothing), a record larger than maxBytes making a batch of its own.
func batches(changes []change, size, maxBytes int) [][]change {
	var out [][]change
	start, n := 0, 0
	for i, c := range changes {
		b := 0
		if c.rec != nil {
			b = c.rec.Size()
		}
		if i > start && (i-start >= size || n+b > maxBytes) {
			out = append(out, changes[start:i])
			start, n = i, 0
		}
		n += b
	}
	if start < len(changes) {
		out = append(out, changes[start:])
	}
	return out
}

// fitting returns how many of recs, from the first, fit in maxBytes
// (knowledge.Record.Size); at least one.
func fitting(recs []knowledge.Record, maxBytes int) int {
	n := 0
	for i := range recs {
		if n += recs[i].Size(); i > 0 && n > maxBytes {
			return i
		}
	}
	return len(recs)
}

// applyRecords indexes changes in one batch.
func (x *Index) applyRecords(changes []change) error {
	b := x.rec.NewBatch()
	for _, c := range changes {
		if c.rec == nil {
			b.Delete(c.id)
			continue
		}
		if err := b.Index(c.id, recordDocOf(c.rec, c.board)); err != nil {
			return fmt.Errorf("index record %s: %w", c.id, err)
		}
	}
	return x.rec.Batch(b)
}

// applyAll indexes bs two at a time (they change distinct records).
func (x *Index) applyAll(bs [][]change) error {
	for i := 0; i < len(bs); i += 2 {
		if i+1 == len(bs) {
			if err := x.applyRecords(bs[i]); err != nil {
				return fmt.Errorf("search: %w", err)
			}
			continue
		}
		var wg sync.WaitGroup
		var errB error
		wg.Go(func() { errB = x.applyRecords(bs[i+1]) })
		errA := x.applyRecords(bs[i])
		wg.Wait()
		if err := errors.Join(errA, errB); err != nil {
			return fmt.Errorf("search: %w", err)
		}
	}
	return nil
}

// build indexes every record into the empty index idx and returns the
// log position it stands for. The position is read first: a write
// committed while the pages are read is applied again by the catch-up
// that follows, which is harmless. The discussions are indexed too when
// discussionsNow is set (a rebuild aside, which nothing waits on);
// otherwise the state says they are still to walk, and Open walks them
// in the background (walk.go), so that a server starting over a large
// database with no index is ready at once.
func (x *Index) build(ctx context.Context, idx bleve.Index, discussionsNow bool) (appliedState, error) {
	ls, err := x.o.Changes.LogState(ctx)
	if err != nil {
		return appliedState{}, fmt.Errorf("search: read the change log's state: %w", err)
	}
	st := appliedState{Epoch: ls.Epoch, Pos: ls.Last}
	if !ls.Last.IsZero() {
		evs, err := x.o.Changes.ReadLog(ctx, justBefore(ls.Last), 1)
		if err != nil {
			return appliedState{}, fmt.Errorf("search: read the change log at %s: %w", ls.Last, err)
		}
		if len(evs) == 1 && evs[0].Pos == ls.Last {
			st.Kind, st.ID = evs[0].Kind, evs[0].ID
		}
	}
	if err := x.buildRecords(ctx, idx); err != nil {
		return appliedState{}, err
	}
	if st.Followed, err = x.buildFollowed(ctx, idx); err != nil {
		return appliedState{}, err
	}
	switch {
	case x.o.Discussions == nil:
	case discussionsNow:
		if st.Discussions, err = x.buildDiscussions(ctx, idx); err != nil {
			return appliedState{}, err
		}
	default:
		st.Walking = true
	}
	// The position goes in last, once everything is on disk: an index
	// that has it is complete.
	if err := flush(idx, keyFeed, st.encode()); err != nil {
		return appliedState{}, fmt.Errorf("search: record the change log position: %w", err)
	}
	return st, nil
}

// buildRecords indexes every record into idx.
func (x *Index) buildRecords(ctx context.Context, idx bleve.Index) error {
	// Pages are read while earlier ones are indexed, and two batches are
	// indexed at once: analysis and segment building then keep the CPUs
	// busy. Pages hold distinct records, so their order does not matter.
	type page struct {
		recs  []knowledge.Record
		board trust.Board
	}
	pages := make(chan page, 2)
	errs := make(chan error, 3)
	var wg sync.WaitGroup
	for range buildWorkers {
		wg.Go(func() {
			for p := range pages {
				recs := p.recs
				for len(recs) > 0 {
					n := fitting(recs, x.o.BatchBytes)
					b := idx.NewBatch()
					for i := range recs[:n] {
						if err := b.Index(recs[i].ID, recordDocOf(&recs[i], p.board)); err != nil {
							errs <- fmt.Errorf("search: index record %s: %w", recs[i].ID, err)
							return
						}
					}
					recs = recs[n:]
					if err := idx.Batch(b); err != nil {
						errs <- fmt.Errorf("search: index records: %w", err)
						return
					}
				}
			}
		})
	}
	readErr := func() error {
		defer close(pages)
		after := ""
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			p, err := x.o.Records.ListRecords(ctx, after, buildBatch)
			if err != nil {
				return fmt.Errorf("search: list records after %q: %w", after, err)
			}
			if len(p.Records) > 0 {
				ptrs := make([]*knowledge.Record, len(p.Records))
				for i := range p.Records {
					ptrs[i] = &p.Records[i]
				}
				board, err := x.recordBoard(ctx, ptrs)
				if err != nil {
					return err
				}
				select {
				case pages <- page{recs: p.Records, board: board}:
				case err := <-errs:
					return err
				}
			}
			if p.Next == "" {
				return nil
			}
			after = p.Next
		}
	}()
	wg.Wait()
	close(errs)
	if readErr != nil {
		return readErr
	}
	return <-errs
}
