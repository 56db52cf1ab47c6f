package search

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestPassesShareASegmentOnDisk: under a stream of asks the follower
// makes a small index batch every followGap. The persister naps between
// writes (runtimeConfig), so the batches of one nap reach the disk as
// one segment file, not a file each that the merger then rewrites again
// and again (issue 24: those merges were over a third of the server's
// CPU per ask). What was flushed is still whole.
func TestPassesShareASegmentOnDisk(t *testing.T) {
	const asks = 20
	f := setup(t, "")
	c := newCommunity(t, f)
	for i := range asks {
		c.ask(t, fmt.Sprintf("How do I tune the gizmo number %d?", i), "")
	}
	ctx := context.Background()
	x := f.idx
	x.writeMu.Lock()
	tail, err := f.db.ReadTail(ctx, x.applied.Pos, 100*asks) // every event of the asks
	if err != nil {
		x.writeMu.Unlock()
		t.Fatal(err)
	}
	before := segmentFilesWritten(t, x)
	// A pass per event, at the pace of the follower under load: without
	// the nap the persister writes each one before the next comes.
	tick := time.NewTicker(followGap / 2)
	for i, e := range tail.Events {
		<-tick.C
		if err := x.apply(ctx, tail.Events[i:i+1]); err != nil {
			x.writeMu.Unlock()
			t.Fatalf("pass %d (%s): %v", i, e.Pos, err)
		}
	}
	tick.Stop()
	err = flush(x.rec, keyFeed, x.applied.encode())
	x.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	// The passes span about one nap, a few on a slow machine: the bound
	// leaves room for that.
	n := len(tail.Events)
	if got := segmentFilesWritten(t, x) - before; got > uint64(n/4) {
		t.Errorf("%d passes wrote %d segment files, want at most %d", n, got, n/4)
	}

	// What was flushed is whole: an index opened on the files resumes
	// after the last pass, with nothing to apply again.
	last := tail.Events[n-1].Pos
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	f.open(t)
	if got := f.idx.Applied(); got != last {
		t.Errorf("reopened at %s, want %s", got, last)
	}
	if st, err := f.idx.Status(ctx); err != nil || st.Discussions != asks {
		t.Errorf("reopened with %+v (%v), want %d discussions", st, err, asks)
	}
}

// segmentFilesWritten is how many segment files the persister has
// written since the index was opened: a segment written as it was, or
// several merged in memory into one.
func segmentFilesWritten(t *testing.T, x *Index) uint64 {
	t.Helper()
	st, ok := x.rec.StatsMap()["index"].(map[string]any)
	if !ok {
		t.Fatal("no index statistics")
	}
	var n uint64
	for _, k := range []string{"TotPersistedSegments", "TotMemMergeZapEnd"} {
		v, ok := st[k].(uint64)
		if !ok {
			t.Fatalf("no %s among the index statistics", k)
		}
		n += v
	}
	return n
}
