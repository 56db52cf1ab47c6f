package search

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/kfa-project/kfa/knowledge"
)

// buildWorkers is how many batches a full build indexes at once, and
// buildBatch how many records go in each. Measured over 100,000 generated
// records on two CPUs: two workers of 1,000 took 34s, one worker 49s; 2,500
// per batch saved 8% for twice the memory.
const buildWorkers, buildBatch = 2, DefaultBatchSize

func recordDocOf(r *knowledge.Record) recordDoc {
	return recordDoc{
		Title: r.Title, Body: r.Body, Tags: r.Tags, Kind: r.Kind, Product: r.Product,
		Environment: r.Environment, URL: r.URL, Updated: knowledge.FormatTime(r.UpdatedAt),
	}
}

// catchUp applies the feed entries after x.applied to x.rec and returns
// how many it applied. It reads at most two batches' worth at a time
// (2×BatchSize entries, 2×BatchBytes of records) and indexes them in
// batches of at most BatchSize entries and BatchBytes bytes (see
// batches), so the memory it holds is bounded by bytes whatever the
// records' sizes. Each step records the position it reached in the index,
// so a crash resumes from the last step applied. The caller holds
// writeMu.
//
// With a backlog (an import in flight, a start after writes), two batches
// of one read are indexed at once when they touch different records, so
// both CPUs work; the position follows in a batch of its own once both
// are in.
func (x *Index) catchUp(ctx context.Context) (int, error) {
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		changes, err := x.o.Records.ChangesWithin(ctx, x.applied.Seq, 2*x.o.BatchSize, 2*x.o.BatchBytes)
		if err != nil {
			return total, fmt.Errorf("search: read feed after %d: %w", x.applied.Seq, err)
		}
		if len(changes) == 0 {
			return total, nil
		}
		last := changes[len(changes)-1]
		st := appliedState{Epoch: x.applied.Epoch, Seq: last.Seq, ID: last.ID, At: last.At}
		if bs := batches(changes, x.o.BatchSize, x.o.BatchBytes); len(bs) == 1 {
			err = x.apply(bs[0], &st)
		} else {
			err = x.applyAll(bs, st)
		}
		if err != nil {
			return total, fmt.Errorf("search: apply feed entries %d-%d: %w", changes[0].Seq, last.Seq, err)
		}
		x.applied = st
		x.seq.Store(st.Seq)
		total += len(changes)
		for _, c := range changes {
			if c.Record != nil {
				x.pending += c.Record.Size()
			}
		}
		if x.pending >= persistBatches*x.o.BatchBytes {
			x.pending = 0
			if err := x.markPersisted(st); err != nil {
				return total, err
			}
		}
	}
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
// entries and maxBytes of records (knowledge.Record.Size; a deletion
// counts nothing), a record larger than maxBytes making a batch of its
// own.
func batches(changes []knowledge.Change, size, maxBytes int) [][]knowledge.Change {
	var out [][]knowledge.Change
	start, n := 0, 0
	for i, c := range changes {
		b := 0
		if c.Record != nil {
			b = c.Record.Size()
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

// apply indexes changes in one batch, with the position st when it is
// not nil.
func (x *Index) apply(changes []knowledge.Change, st *appliedState) error {
	b := x.rec.NewBatch()
	for _, c := range changes {
		// The record is read as it is now, so the last entry for an id wins
		// whatever the order within the batch.
		if c.Record == nil {
			b.Delete(c.ID)
			continue
		}
		if err := b.Index(c.ID, recordDocOf(c.Record)); err != nil {
			return fmt.Errorf("index record %s: %w", c.ID, err)
		}
	}
	if st != nil {
		b.SetInternal(keyFeed, st.encode())
	}
	return x.rec.Batch(b)
}

// applyAll indexes bs in order, two at a time when they change
// different records, then the position st in a batch of its own once
// all are in.
func (x *Index) applyAll(bs [][]knowledge.Change, st appliedState) error {
	for i := 0; i < len(bs); i += 2 {
		if i+1 == len(bs) || !disjoint(bs[i], bs[i+1]) {
			if err := x.apply(bs[i], nil); err != nil {
				return err
			}
			i-- // the next pair starts at bs[i+1]
			continue
		}
		var wg sync.WaitGroup
		var errB error
		wg.Go(func() { errB = x.apply(bs[i+1], nil) })
		errA := x.apply(bs[i], nil)
		wg.Wait()
		if err := errors.Join(errA, errB); err != nil {
			return err
		}
	}
	pos := x.rec.NewBatch()
	pos.SetInternal(keyFeed, st.encode())
	return x.rec.Batch(pos)
}

// disjoint reports whether a and b change different records.
func disjoint(a, b []knowledge.Change) bool {
	ids := make(map[string]struct{}, len(a))
	for _, c := range a {
		ids[c.ID] = struct{}{}
	}
	for _, c := range b {
		if _, ok := ids[c.ID]; ok {
			return false
		}
	}
	return true
}

// buildRecords indexes every record into the empty index idx and returns
// the feed position it stands for. The position is read first: a record
// written while the pages are read is indexed again by the catch-up that
// follows, which is harmless.
func (x *Index) buildRecords(ctx context.Context, idx bleve.Index) (appliedState, error) {
	fs, err := x.o.Records.Feed(ctx)
	if err != nil {
		return appliedState{}, fmt.Errorf("search: read feed state: %w", err)
	}
	st := appliedState{Epoch: fs.Epoch, Seq: fs.Last}
	if fs.Last > 0 {
		ch, err := x.o.Records.Changes(ctx, fs.Last-1, 1)
		if err != nil {
			return appliedState{}, fmt.Errorf("search: read feed entry %d: %w", fs.Last, err)
		}
		if len(ch) == 1 && ch[0].Seq == fs.Last {
			st.ID, st.At = ch[0].ID, ch[0].At
		}
	}
	// Pages are read while earlier ones are indexed, and two batches are
	// indexed at once: analysis and segment building then keep the CPUs
	// busy. Pages hold distinct records, so their order does not matter;
	// the position is written last, once every page is in.
	pages := make(chan []knowledge.Record, 2)
	errs := make(chan error, 3)
	var wg sync.WaitGroup
	for range buildWorkers {
		wg.Go(func() {
			for recs := range pages {
				for len(recs) > 0 {
					n := fitting(recs, x.o.BatchBytes)
					b := idx.NewBatch()
					for i := range recs[:n] {
						if err := b.Index(recs[i].ID, recordDocOf(&recs[i])); err != nil {
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
				select {
				case pages <- p.Records:
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
		return appliedState{}, readErr
	}
	if err := <-errs; err != nil {
		return appliedState{}, err
	}
	// The position goes in last, once everything is on disk: an index
	// that has it is complete.
	if err := flush(idx, keyFeed, st.encode()); err != nil {
		return appliedState{}, fmt.Errorf("search: record the feed position: %w", err)
	}
	return st, nil
}
