package changelog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Defaults of TrimmerOptions.
const (
	// DefaultRetention is the log's horizon: events written longer ago
	// may be trimmed once every live durable follower has passed them (a
	// reader of the records' feed whose cursor is older starts over).
	DefaultRetention = 30 * 24 * time.Hour
	// DefaultTrimEvery is how often the trimmer runs.
	DefaultTrimEvery = time.Hour
)

// TrimmerOptions configure a Trimmer.
type TrimmerOptions struct {
	// Retention is the horizon (see Trimmable). Default DefaultRetention.
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

// Trimmer bounds the log: it trims, now and then, what the horizon and
// the durable followers let go (Trimmable.TrimLog). Start and Stop run it
// in the background.
type Trimmer struct {
	store Trimmable
	o     TrimmerOptions

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewTrimmer returns a stopped trimmer over s.
func NewTrimmer(s Trimmable, o TrimmerOptions) *Trimmer {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
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
// events it removed.
func (t *Trimmer) Trim(ctx context.Context) (int, error) {
	before := t.o.Now().Add(-t.o.Retention)
	n, err := t.store.TrimLog(ctx, before)
	if err != nil {
		return n, fmt.Errorf("trim the change log: %w", err)
	}
	if n > 0 {
		t.o.Log.Info("trimmed the change log", "removed", n, "before", before.UTC().Format(time.RFC3339))
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
			t.o.Log.Error("change log trim failed; retrying later", "err", err.Error())
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
