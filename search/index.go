package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/kfa-project/kfa/knowledge"
)

// RecordSource is what the records index reads: the change feed and the
// records. knowledge.Store (and so store.DB) provides it.
type RecordSource interface {
	Changes(ctx context.Context, after uint64, limit int) ([]knowledge.Change, error)
	// ChangesWithin is Changes stopping before the entry whose record
	// would take the records' Size past maxBytes (at least one entry).
	ChangesWithin(ctx context.Context, after uint64, limit, maxBytes int) ([]knowledge.Change, error)
	Feed(ctx context.Context) (knowledge.FeedState, error)
	ListRecords(ctx context.Context, after string, limit int) (knowledge.RecordPage, error)
}

// Defaults of Options.
const (
	DefaultTick      = time.Second
	DefaultBatchSize = 1000
	// DefaultBatchBytes bounds the record bytes (knowledge.Record.Size)
	// of one index batch. Analysing a batch and building its segment holds
	// tens of times its text in memory, and two batches are indexed at
	// once: importing 100,000 generated records of 1.4 KB into a running
	// server, the heap's peak after a collection was 127 MiB with 1 MiB
	// batches and 40 MiB with 256 KiB ones (about 180 records), the import
	// no slower (docs/performance.md).
	DefaultBatchBytes = 256 << 10
)

// Options configure Open.
type Options struct {
	// Dir holds the index, normally <data>/index. It is derived data:
	// deleting it makes the next Open rebuild it.
	Dir string
	// Records is the source of truth the records index follows.
	Records RecordSource
	// Written wakes the follower when records were written (see
	// knowledge.Service.Written). Optional: the follower also checks the
	// feed every Tick.
	Written <-chan struct{}
	// Discussions, when set, has its discussions indexed beside the
	// records: answered ones rank with them, open ones are found by a
	// query that asks the same question.
	Discussions DiscussionSource
	// Watch names the discussions that were asked or got replies, so they
	// are re-indexed at once. Optional (see DiscussionWatch).
	Watch *DiscussionWatch
	// SynonymsFile is the operator's synonyms file (see Synonyms), read
	// by Open and again by Rebuild; a missing file means no synonyms, ""
	// none at all.
	SynonymsFile string
	// PublicURL is the server's base URL; the results' page links start
	// with it.
	PublicURL string
	// Tick is how often the follower looks at the feed without a wake-up.
	// Default DefaultTick.
	Tick time.Duration
	// BatchSize is how many feed entries go into one index batch. Default
	// DefaultBatchSize.
	BatchSize int
	// BatchBytes bounds the record bytes (knowledge.Record.Size) in one
	// index batch: a batch holds at most BatchSize entries and BatchBytes
	// bytes, or a single larger record. Default DefaultBatchBytes.
	BatchBytes int
	// Log receives index events. Default: discarded.
	Log *slog.Logger

	// reconcileHook, when set (by tests), is called before each page of a
	// background reconcile, with the number of pages done.
	reconcileHook func(pages int)
}

// Index is the search index: records and discussions, in one bleve
// index. Search is safe for concurrent use with everything else; writes
// (catch-up, discussion sync, rebuild) are serialised.
type Index struct {
	o Options

	mu  sync.RWMutex // guards rec, an and syn, which Rebuild swaps
	rec bleve.Index
	an  analyser  // how queries are analysed: as rec's documents were
	syn *Synonyms // the synonyms rec was built with

	writeMu   sync.Mutex   // one writer at a time
	applied   appliedState // last applied feed entry; guarded by writeMu
	pending   int          // record bytes applied since the last persistence mark; guarded by writeMu
	persisted chan error   // the last persistence mark's callback, nil when none is out; guarded by writeMu
	seq       atomic.Uint64
	discs     discCounts   // discussions indexed; guarded by writeMu
	discCount atomic.Int64 // discs.all, for Status
	// stale: discs is a guess until a reconcile ends; reconciling: one
	// runs in the background, rc its progress. Guarded by writeMu.
	stale, reconciling bool
	rc                 reconcileState

	recMu     sync.Mutex // guards recCancel and recDone
	recCancel context.CancelFunc
	recDone   chan struct{}

	runMu  sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	synced func() // tests: called after each pass of the follower
}

// Sub-directories of Options.Dir.
const (
	recordsDir           = "records" // records and discussions
	legacyDiscussionsDir = "discussions"
	rebuildSuffix        = ".rebuild"
)

// ErrClosed is returned by an Index after Close.
var ErrClosed = errors.New("search: index is closed")

// Open opens the index in o.Dir, creating or rebuilding what is missing,
// corrupt or stale, and catches up with the feed before it returns, so
// that the first search sees every committed record. The discussions are
// reconciled in the background after it returns (see reconcileLive):
// until that ends, a search may miss discussion writes the index did not
// see before it opened.
func Open(ctx context.Context, o Options) (*Index, error) {
	if o.Records == nil {
		return nil, errors.New("search: Options.Records is required")
	}
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	x := &Index{o: o}
	syn, m, err := x.loadMapping()
	if err != nil {
		return nil, err
	}
	x.syn, x.an = syn, newAnalysis(m)
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("search: create %s: %w", o.Dir, err)
	}
	// A rebuild that a crash interrupted leaves its work behind; before
	// schema kfa-search-2, discussions had an index of their own.
	for _, d := range []string{recordsDir + rebuildSuffix, legacyDiscussionsDir, legacyDiscussionsDir + rebuildSuffix} {
		_ = os.RemoveAll(filepath.Join(o.Dir, d))
	}
	start := time.Now()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	rebuilt, err := x.openRecords(ctx, m)
	if err != nil {
		return nil, err
	}
	if o.Discussions != nil {
		// Until the reconcile ends, the store's counts stand for the
		// indexed ones; an index built just now holds none yet (the
		// reconcile counts them in as it indexes them), and counting the
		// store's would subtract them from its records.
		var n discCounts
		if !rebuilt {
			if n, err = x.storeCounts(ctx); err != nil {
				_ = x.rec.Close()
				return nil, err
			}
		}
		x.setDiscs(n)
		x.stale = true
		x.startReconcile(ctx)
	}
	n, _ := x.rec.DocCount()
	o.Log.Info("search index ready", "dir", o.Dir, "records", x.records(n), "feed_seq", x.applied.Seq,
		"discussions", x.discs.all, "reconciling", x.reconciling, "synonym_groups", syn.Len(), "rebuilt", rebuilt, "took", time.Since(start).Round(time.Millisecond))
	return x, nil
}

// loadMapping reads the synonyms file and makes the index mapping that
// folds them.
func (x *Index) loadMapping() (*Synonyms, *mapping.IndexMappingImpl, error) {
	var syn *Synonyms
	if x.o.SynonymsFile != "" {
		var err error
		if syn, err = LoadSynonyms(x.o.SynonymsFile); err != nil {
			return nil, nil, err
		}
	}
	m, err := indexMapping(syn)
	if err != nil {
		return nil, nil, fmt.Errorf("search: index mapping: %w", err)
	}
	return syn, m, nil
}

// openRecords opens the records index and brings it level with the feed:
// by catching up when its state still matches the feed, otherwise by
// building it from the records. rebuilt reports the latter.
func (x *Index) openRecords(ctx context.Context, m *mapping.IndexMappingImpl) (rebuilt bool, err error) {
	dir := filepath.Join(x.o.Dir, recordsDir)
	idx, fresh, err := openIndex(dir, m, x.syn.Digest(), x.o.Log)
	if err != nil {
		return false, err
	}
	if !fresh {
		st, ok, err := readState(idx)
		if err != nil {
			_ = idx.Close()
			return false, fmt.Errorf("search: read index state: %w", err)
		}
		reason := "it holds no feed position (an earlier build did not finish)"
		if d, err := idx.GetInternal(keySynonyms); err != nil || string(d) != x.syn.Digest() {
			ok, reason = false, "the synonyms file changed since it was built"
		}
		if ok {
			reason, err = x.checkState(ctx, st)
			if err != nil {
				_ = idx.Close()
				return false, err
			}
		}
		if reason == "" {
			x.rec, x.applied = idx, st
			x.seq.Store(st.Seq)
			n, err := x.catchUp(ctx)
			if err != nil {
				_ = idx.Close()
				return false, err
			}
			if n > 0 {
				x.o.Log.Info("search index caught up with the feed", "applied", n, "feed_seq", x.applied.Seq)
			}
			return false, nil
		}
		x.o.Log.Warn("search index does not match the store; rebuilding it", "reason", reason)
		_ = idx.Close()
		if err := os.RemoveAll(dir); err != nil {
			return false, fmt.Errorf("search: remove stale index: %w", err)
		}
		if idx, err = createIndex(dir, m, x.syn.Digest()); err != nil {
			return false, err
		}
	}
	st, err := x.buildRecords(ctx, idx)
	if err != nil {
		_ = idx.Close()
		return false, err
	}
	x.rec, x.applied = idx, st
	x.seq.Store(st.Seq)
	if _, err := x.catchUp(ctx); err != nil {
		_ = idx.Close()
		return false, err
	}
	return true, nil
}

// checkState explains why an index that applied the feed up to st cannot
// follow the store's feed from there, or returns "".
func (x *Index) checkState(ctx context.Context, st appliedState) (string, error) {
	fs, err := x.o.Records.Feed(ctx)
	if err != nil {
		return "", fmt.Errorf("search: read feed state: %w", err)
	}
	if st.Epoch != fs.Epoch {
		return "it was built from another database file", nil
	}
	if st.Seq > fs.Last {
		return fmt.Sprintf("it applied feed entry %d but the feed ends at %d (was the database restored from a backup?)", st.Seq, fs.Last), nil
	}
	if st.Seq < fs.Trimmed {
		return fmt.Sprintf("the feed no longer holds the entries after %d (trimmed up to %d)", st.Seq, fs.Trimmed), nil
	}
	if st.Seq == 0 {
		return "", nil
	}
	ch, err := x.o.Records.Changes(ctx, st.Seq-1, 1)
	if err != nil {
		return "", fmt.Errorf("search: read feed entry %d: %w", st.Seq, err)
	}
	if len(ch) == 0 || ch[0].Seq != st.Seq || ch[0].ID != st.ID || !ch[0].At.Equal(st.At) {
		return fmt.Sprintf("feed entry %d is not the one the index applied (the database was replaced or written without it)", st.Seq), nil
	}
	return "", nil
}

// Applied returns the last feed sequence the records index applied.
func (x *Index) Applied() uint64 { return x.seq.Load() }

// Status reports the index: records and discussions indexed, and how far
// it follows the feed.
func (x *Index) Status(ctx context.Context) (knowledge.IndexStatus, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.rec == nil {
		return knowledge.IndexStatus{}, ErrClosed
	}
	st := knowledge.IndexStatus{Dir: x.o.Dir, AppliedSeq: x.seq.Load(), SynonymGroups: x.syn.Len()}
	n, err := x.rec.DocCount()
	if err != nil {
		return st, err
	}
	st.Discussions = int(x.discCount.Load())
	st.Records = x.records(n)
	fs, err := x.o.Records.Feed(ctx)
	if err != nil {
		return st, err
	}
	st.FeedSeq = fs.Last
	return st, nil
}

// records is how many of the index's docs documents are records. While a
// reconcile runs, the discussions counted are the store's, so it is only
// an estimate then, never below zero.
func (x *Index) records(docs uint64) int {
	return max(0, int(docs)-int(x.discCount.Load()))
}

// Lag is how many change-feed entries the index has yet to apply.
func (x *Index) Lag(ctx context.Context) (int64, error) {
	fs, err := x.o.Records.Feed(ctx)
	if err != nil {
		return 0, err
	}
	applied := x.seq.Load()
	if fs.Last <= applied {
		return 0, nil
	}
	return int64(fs.Last - applied), nil
}

// Close stops the follower and closes the index files. The store may be
// closed after it.
func (x *Index) Close() error {
	x.Stop()
	x.stopReconcile()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	var errs []error
	if x.rec != nil {
		if err := flush(x.rec, keyFeed, x.applied.encode()); err != nil {
			x.o.Log.Warn("search index not flushed; the next start replays the feed", "err", err.Error())
		}
		errs = append(errs, x.rec.Close())
		x.rec = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("search: close index: %w", err)
	}
	return nil
}
