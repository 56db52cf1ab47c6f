package knowledge

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Defaults of feed retention.
const (
	// DefaultFeedRetention is how long change-feed entries are kept
	// before those a reader starting over does not need are trimmed.
	DefaultFeedRetention = 30 * 24 * time.Hour
	// DefaultTrimEvery is how often the trimmer runs.
	DefaultTrimEvery = time.Hour
)

// TrimmerOptions configure a Trimmer.
type TrimmerOptions struct {
	// Retention is the horizon: entries written longer ago may go.
	// Default DefaultFeedRetention.
	Retention time.Duration
	// Every is the time between two trims; the first runs at Start.
	// Default DefaultTrimEvery.
	Every time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Log receives a line per trim that removed something, and errors.
	// Default: discarded.
	Log *slog.Logger
}

// Trimmer bounds the change feed: it trims the entries older than the
// retention horizon that a reader starting from the beginning does not
// need, keeping the latest entry of every record. A reader whose cursor
// is older than the horizon gets ErrCursorTooOld from Changes and starts
// over. Start and Stop run it in the background.
type Trimmer struct {
	store Store
	o     TrimmerOptions

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewTrimmer returns a stopped trimmer over s.
func NewTrimmer(s Store, o TrimmerOptions) *Trimmer {
	if o.Retention <= 0 {
		o.Retention = DefaultFeedRetention
	}
	if o.Every <= 0 {
		o.Every = DefaultTrimEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Trimmer{store: s, o: o}
}

// Trim removes, now, what the horizon lets go, and returns how many
// entries it removed.
func (t *Trimmer) Trim(ctx context.Context) (int, error) {
	before := t.o.Now().Add(-t.o.Retention)
	n, err := t.store.TrimFeed(ctx, before)
	if err != nil {
		return n, fmt.Errorf("trim the change feed: %w", err)
	}
	if n > 0 {
		t.o.Log.Info("trimmed the change feed", "removed", n, "before", FormatTime(before))
	}
	return n, nil
}

// Start trims at once, then every Options.Every, until ctx ends or Stop.
// A second Start while running does nothing.
func (t *Trimmer) Start(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	t.cancel, t.done = cancel, make(chan struct{})
	go t.run(ctx, t.done)
}

func (t *Trimmer) run(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(t.o.Every)
	defer tick.Stop()
	for {
		if _, err := t.Trim(ctx); err != nil && ctx.Err() == nil {
			t.o.Log.Error("change feed trim failed; retrying later", "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Stop ends the background trims and waits for the one running. Stopping
// a stopped trimmer does nothing.
func (t *Trimmer) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel == nil {
		return
	}
	t.cancel()
	<-t.done
	t.cancel, t.done = nil, nil
}
