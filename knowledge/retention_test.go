package knowledge_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store"
)

var day0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func retentionSetup(t *testing.T) (*knowledge.Service, *store.DB, *clock) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := &clock{t: day0}
	return knowledge.NewService(db, c.now), db, c
}

func mustImport(t *testing.T, svc *knowledge.Service, ls ...string) {
	t.Helper()
	if _, err := svc.Import(context.Background(), strings.NewReader(lines(ls...)), knowledge.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
}

func feedIDs(t *testing.T, db *store.DB) string {
	t.Helper()
	_, chs, err := db.Changes(context.Background(), changelog.Position{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range chs {
		ids = append(ids, c.ID+":"+string(c.Op))
	}
	return strings.Join(ids, ",")
}

func TestTrimKeepsWhatAReaderStartingOverNeeds(t *testing.T) {
	ctx := context.Background()
	horizon := 30 * 24 * time.Hour
	tests := []struct {
		name    string
		write   func(t *testing.T, svc *knowledge.Service, c *clock)
		want    string // the feed afterwards
		trimmed uint64 // the records feed's trimmed point
	}{
		{name: "nothing is old", write: func(t *testing.T, svc *knowledge.Service, c *clock) {
			c.set(day0.Add(29 * 24 * time.Hour))
			mustImport(t, svc, line("a", "A"), line("a", "A2"))
		}, want: "a:upsert,a:upsert"},
		{name: "the latest entry of each record stays, however old", write: func(t *testing.T, svc *knowledge.Service, c *clock) {
			mustImport(t, svc, line("a", "A"), line("b", "B"))
			mustImport(t, svc, line("a", "A2"))
		}, want: "b:upsert,a:upsert", trimmed: 1},
		{name: "old deletes go, the newest entry of the feed stays", write: func(t *testing.T, svc *knowledge.Service, c *clock) {
			mustImport(t, svc, line("a", "A"), line("b", "B"), line("c", "C"))
			if err := svc.Delete(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
			if err := svc.Delete(context.Background(), "b"); err != nil {
				t.Fatal(err)
			}
		}, want: "c:upsert,b:delete", trimmed: 4},
		{name: "retention goes by when an entry was written, not the record's updatedAt", write: func(t *testing.T, svc *knowledge.Service, c *clock) {
			c.set(day0.Add(35 * 24 * time.Hour))
			mustImport(t, svc, `{"id":"a","kind":"fix","title":"A","body":"x","updatedAt":"2020-01-01T00:00:00Z"}`,
				`{"id":"a","kind":"fix","title":"A2","body":"x","updatedAt":"2020-01-01T00:00:00Z"}`)
		}, want: "a:upsert,a:upsert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, db, c := retentionSetup(t)
			tt.write(t, svc, c)
			tr := changelog.NewTrimmer(db, changelog.TrimmerOptions{Retention: horizon, Now: func() time.Time { return day0.Add(40 * 24 * time.Hour) }})
			if _, err := tr.Trim(ctx); err != nil {
				t.Fatal(err)
			}
			if got := feedIDs(t, db); got != tt.want {
				t.Fatalf("feed %s, want %s", got, tt.want)
			}
			st, err := db.Feed(ctx)
			if err != nil || st.Trimmed.Seq != tt.trimmed {
				t.Fatalf("trimmed %s (%v), want %d", st.Trimmed, err, tt.trimmed)
			}
			// A second trim has nothing to do and writes nothing.
			before, err := db.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if n, err := tr.Trim(ctx); err != nil || n != 0 {
				t.Fatalf("second trim removed %d, %v", n, err)
			}
			if after, err := db.Digest(); err != nil || after != before {
				t.Fatalf("a trim with nothing to do changed the file (%v)", err)
			}
		})
	}
}

// blockingTrims is the store, with each TrimLog reported on calls and
// held until release is closed (or its context ends).
type blockingTrims struct {
	*store.DB
	calls   chan time.Time
	release chan struct{}
}

func (b blockingTrims) TrimLog(ctx context.Context, before time.Time) (int, error) {
	b.calls <- before
	select {
	case <-b.release:
	case <-ctx.Done():
		// Both may be ready by the time this runs (the test releases, then
		// stops; under load this goroutine gets here after both), and a
		// select picks at random: released first means the trim goes on.
		select {
		case <-b.release:
		default:
			return 0, ctx.Err()
		}
	}
	// Once released, the trim runs to its end even if Stop comes meanwhile.
	return b.DB.TrimLog(context.WithoutCancel(ctx), before)
}

// TestTrimmerStartStop: Start trims at once, at the horizon behind the
// clock, and the trim removes what it should from the records feed; a
// second Start starts no second loop; Stop waits for the trim running;
// after Stop nothing trims.
func TestTrimmerStartStop(t *testing.T) {
	svc, db, c := retentionSetup(t)
	mustImport(t, svc, line("a", "A"), line("b", "B"))
	mustImport(t, svc, line("a", "A2"))
	c.set(day0.Add(40 * 24 * time.Hour))
	mustImport(t, svc, line("c", "C"))
	bt := blockingTrims{DB: db, calls: make(chan time.Time, 4), release: make(chan struct{})}
	tr := changelog.NewTrimmer(bt, changelog.TrimmerOptions{Retention: 30 * 24 * time.Hour, Every: time.Hour, Now: c.now})
	tr.Stop() // never started: nothing
	tr.Start(context.Background())
	tr.Start(context.Background()) // running: nothing
	if before := <-bt.calls; !before.Equal(day0.Add(10 * 24 * time.Hour)) {
		t.Fatalf("the first trim went by %s, want the horizon %s", before, day0.Add(10*24*time.Hour))
	}
	close(bt.release)
	// The trim runs to its end; Stop waits for it, so afterwards a's
	// first version is gone.
	tr.Stop()
	if got := feedIDs(t, db); got != "b:upsert,a:upsert,c:upsert" {
		t.Fatalf("feed after the trim %s", got)
	}
	tr.Stop()
	select {
	case b := <-bt.calls:
		t.Fatalf("a second trim (before %s): two loops ran", b)
	default:
	}
}
