package search

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
)

// lockedBuffer is a log sink for the index's logger and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCountsAfterARebuild: an index rebuilt at start (after kfa restore,
// which deletes it) holds the records and no discussion until its
// background walk indexes them, so its start-up log line and its status
// count every record while the walk runs (they once said records=75 of
// 78, the three discussions subtracted), and both counts are exact once
// it ends.
func TestCountsAfterARebuild(t *testing.T) {
	ctx := context.Background()
	f := setup(t, gen(0, 12))
	c := newCommunity(t, f)
	for i := range 3 {
		c.ask(t, fmt.Sprintf("Where does okapi number %d sleep?", i), "")
	}
	if err := f.idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(f.dir, "index")); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var logs lockedBuffer
	idx, err := Open(ctx, Options{
		Dir: filepath.Join(f.dir, "index"), Changes: f.db, Records: f.db, Discussions: f.db, Cursors: f.db,
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
		walkHook: func(_ context.Context, pages int) {
			if pages == 0 {
				held <- struct{}{}
				<-release
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	<-held
	if m := regexp.MustCompile(`msg="search index ready" .*records=(\d+) .*discussions=(\d+) .*rebuilt=true`).FindStringSubmatch(logs.String()); m == nil ||
		m[1] != "12" || m[2] != "0" {
		t.Errorf("start-up log says %q, want records=12 discussions=0:\n%s", m, logs.String())
	}
	st, err := idx.Status(ctx)
	if err != nil || st.Records != 12 || st.Discussions != 0 {
		t.Errorf("status while the walk runs: %+v %v, want 12 records, 0 discussions", st, err)
	}
	close(release)
	waitWalked(t, idx)
	if st, err := idx.Status(ctx); err != nil || st.Records != 12 || st.Discussions != 3 {
		t.Errorf("status after the walk: %+v %v, want 12 records, 3 discussions", st, err)
	}
}
