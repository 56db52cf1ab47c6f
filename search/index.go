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

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/markdown"
)

// RecordSource is what the index reads of the records. knowledge.Store
// (and so both stores) provides it.
type RecordSource interface {
	ListRecords(ctx context.Context, after string, limit int) (knowledge.RecordPage, error)
	// GetRecords returns the records ids as they are now; nil where none.
	GetRecords(ctx context.Context, ids []string) ([]*knowledge.Record, error)
}

// Defaults of Options.
const (
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
	// Changes is the change log the index follows: its record and
	// discussion events say what to index again.
	Changes changelog.Log
	// Records is what the index reads the records from.
	Records RecordSource
	// Discussions, when set, has its discussions indexed beside the
	// records: answered ones rank with them, open ones are found by a
	// query that asks the same question.
	Discussions DiscussionSource
	// Followed, when set, has the documents followed from peers indexed
	// beside the local ones (followed.go).
	Followed FollowedSource
	// Signals, when set, has the records' and the answers' votes and
	// verifications indexed with them (they rank hits and are shown with
	// them), and the authors' reputations kept beside.
	Signals SignalSource
	// Cursors, when set, keeps the index's position in the store as a
	// durable cursor, so that trimming the log waits for it.
	Cursors changelog.Cursors
	// SynonymsFile is the operator's synonyms file (see Synonyms), read
	// by Open and again by Rebuild; a missing file means no synonyms, ""
	// none at all.
	SynonymsFile string
	// PublicURL is the server's base URL; the results' page links start
	// with it.
	PublicURL string
	// Tick is how often the follower reads the log without a wake-up.
	// Default changelog.DefaultTick.
	Tick time.Duration
	// BatchSize is how many events the follower reads at once, and how
	// many records go into one index batch. Default DefaultBatchSize.
	BatchSize int
	// BatchBytes bounds the record bytes (knowledge.Record.Size) in one
	// index batch: a batch holds at most BatchSize records and BatchBytes
	// bytes, or a single larger record. Default DefaultBatchBytes.
	BatchBytes int
	// Log receives index events. Default: discarded.
	Log *slog.Logger

	// applyHook, when set (tests), runs before each batch of events is
	// indexed (phase "before") and once it is indexed, before its
	// position is known to be on disk ("after"); an error it returns
	// fails the batch.
	applyHook func(phase string, evs []changelog.Event) error
	// gap, when set (benchmarks), replaces followGap; negative: none.
	gap time.Duration
	// walkHook, when set (tests), runs before each page of the
	// background walk of the discussions, with the pages done.
	walkHook func(ctx context.Context, pages int)
}

// Index is the search index: records and discussions, in one bleve
// index, following the change log. Search is safe for concurrent use
// with everything else; writes (following, rebuild) are serialised.
type Index struct {
	o Options

	mu  sync.RWMutex // guards rec, an and syn, which Rebuild swaps
	rec bleve.Index
	an  analyser  // how queries are analysed: as rec's documents were
	syn *Synonyms // the synonyms rec was built with

	writeMu   sync.Mutex   // one writer at a time
	applied   appliedState // the last event applied; guarded by writeMu
	pending   int          // record bytes applied since the last persistence mark; guarded by writeMu
	persisted chan error   // the last persistence mark's callback, nil when none is out; guarded by writeMu
	pos       atomic.Pointer[changelog.Position]
	discCount atomic.Int64 // discussions indexed, for Status
	followed  atomic.Int64 // followed documents indexed, for Status

	runMu  sync.Mutex
	runner *changelog.Runner // nil while not following

	// md keeps the text of bodies (markdown.Text): a discussion is
	// indexed again at each reply, with the replies it already had.
	md *markdown.Renderer

	walkMu     sync.Mutex // guards walkCancel and walkDone
	walkCancel context.CancelFunc
	walkDone   chan struct{}
}

// textCacheBytes bounds the bodies' text the index keeps.
const textCacheBytes = 8 << 20

// Sub-directories of Options.Dir.
const (
	recordsDir           = "records" // records and discussions
	legacyDiscussionsDir = "discussions"
	rebuildSuffix        = ".rebuild"
)

// ErrClosed is returned by an Index after Close.
var ErrClosed = errors.New("search: index is closed")

// Open opens the index in o.Dir, creating or rebuilding what is missing,
// corrupt or stale, and applies the change log up to its end before it
// returns, so that the first search sees every committed write. Start
// then follows the log.
func Open(ctx context.Context, o Options) (*Index, error) {
	if o.Changes == nil || o.Records == nil {
		return nil, errors.New("search: Options.Changes and Options.Records are required")
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
	x := &Index{o: o, md: markdown.NewRenderer(markdown.Options{CacheBytes: textCacheBytes})}
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
	n, _ := x.rec.DocCount()
	o.Log.Info("search index ready", "dir", o.Dir, "records", x.records(n), "discussions", x.discCount.Load(),
		"log_position", x.applied.Pos.String(), "synonym_groups", syn.Len(), "rebuilt", rebuilt,
		"walking_discussions", x.applied.Walking, "took", time.Since(start).Round(time.Millisecond))
	if x.applied.Walking {
		x.startWalk()
	}
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

// openRecords opens the index and brings it level with the log: by
// catching up when its position is still one the log can follow from,
// otherwise by building it from the store. rebuilt reports the latter.
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
		reason := "it holds no change log position (an earlier build did not finish, or an older kfa built it from the records feed)"
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
			x.rec = idx
			x.setApplied(st)
			n, err := x.catchUp(ctx)
			if err != nil {
				_ = idx.Close()
				return false, err
			}
			if n > 0 {
				x.o.Log.Info("search index caught up with the change log", "applied", n, "log_position", x.applied.Pos.String())
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
	st, err := x.build(ctx, idx, false)
	if err != nil {
		_ = idx.Close()
		return false, err
	}
	if idx, err = reopen(idx, dir); err != nil {
		return false, err
	}
	x.rec = idx
	x.setApplied(st)
	if _, err := x.catchUp(ctx); err != nil {
		_ = idx.Close()
		return false, err
	}
	return true, nil
}

// checkState explains why an index that applied the log up to st cannot
// follow the store's log from there, or returns "".
func (x *Index) checkState(ctx context.Context, st appliedState) (string, error) {
	ls, err := x.o.Changes.LogState(ctx)
	if err != nil {
		return "", fmt.Errorf("search: read the change log's state: %w", err)
	}
	switch {
	case st.Epoch != ls.Epoch:
		return "it was built from another database's change log", nil
	case ls.Last.Before(st.Pos):
		return fmt.Sprintf("it applied the change log up to %s but the log ends at %s (was the database restored from a backup?)", st.Pos, ls.Last), nil
	case st.Pos.Before(ls.Trimmed):
		return fmt.Sprintf("the change log no longer holds the events after %s (trimmed up to %s): the index was not followed for longer than the retention horizon", st.Pos, ls.Trimmed), nil
	case st.Pos.IsZero():
		return "", nil
	}
	// The event at st.Pos must be the one the index applied, unless
	// trimming removed it.
	evs, err := x.o.Changes.ReadLog(ctx, justBefore(st.Pos), 1)
	if err != nil {
		return "", fmt.Errorf("search: read the change log at %s: %w", st.Pos, err)
	}
	if len(evs) == 1 && evs[0].Pos == st.Pos && (evs[0].Kind != st.Kind || evs[0].ID != st.ID) {
		return fmt.Sprintf("the change log's event at %s is not the one the index applied (the database was replaced or written without it)", st.Pos), nil
	}
	if (len(evs) == 0 || evs[0].Pos != st.Pos) && ls.Trimmed.Before(st.Pos) {
		return fmt.Sprintf("the change log holds no event at %s, where the index stopped (the database was replaced)", st.Pos), nil
	}
	return "", nil
}

// justBefore is a position a read after which starts at p.
func justBefore(p changelog.Position) changelog.Position {
	if p.Seq == 0 {
		return changelog.Position{Tx: p.Tx - 1, Seq: ^uint64(0)}
	}
	return changelog.Position{Tx: p.Tx, Seq: p.Seq - 1}
}

// setApplied records st as the index's position. The caller holds
// writeMu.
func (x *Index) setApplied(st appliedState) {
	x.applied = st
	p := st.Pos
	x.pos.Store(&p)
	x.discCount.Store(int64(st.Discussions))
	x.followed.Store(int64(st.Followed))
}

// Applied returns the change log position the index has applied up to.
func (x *Index) Applied() changelog.Position {
	if p := x.pos.Load(); p != nil {
		return *p
	}
	return changelog.Position{}
}

// Status reports the index: records and discussions indexed, and how far
// it follows the log.
func (x *Index) Status(ctx context.Context) (knowledge.IndexStatus, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.rec == nil {
		return knowledge.IndexStatus{}, ErrClosed
	}
	st := knowledge.IndexStatus{Dir: x.o.Dir, AppliedPosition: x.Applied().String(), SynonymGroups: x.syn.Len()}
	n, err := x.rec.DocCount()
	if err != nil {
		return st, err
	}
	st.Discussions = int(x.discCount.Load())
	st.Records = x.records(n)
	ls, err := x.o.Changes.LogState(ctx)
	if err != nil {
		return st, err
	}
	st.LogPosition = ls.Last.String()
	return st, nil
}

// records is how many of the index's docs documents are records.
func (x *Index) records(docs uint64) int {
	return max(0, int(docs)-int(x.discCount.Load())-int(x.followed.Load()))
}

// Lag is about how many change log events the index has yet to apply
// (every event counts, not only those it indexes).
func (x *Index) Lag(ctx context.Context) (int64, error) {
	ls, err := x.o.Changes.LogState(ctx)
	if err != nil {
		return 0, err
	}
	applied := x.Applied()
	if !applied.Before(ls.Last) {
		return 0, nil
	}
	if ls.Last.Seq <= applied.Seq {
		return 1, nil // another transaction's first events: at least one
	}
	// Sequence numbers count the events of the whole log on both stores.
	return int64(ls.Last.Seq - applied.Seq), nil
}

// Close stops the follower and closes the index files. The store may be
// closed after it.
func (x *Index) Close() error {
	x.Stop()
	x.stopWalk()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	var errs []error
	if x.rec != nil {
		if err := flush(x.rec, keyFeed, x.applied.encode()); err != nil {
			x.o.Log.Warn("search index not flushed; the next start replays the change log", "err", err.Error())
		}
		errs = append(errs, x.rec.Close())
		x.rec = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("search: close index: %w", err)
	}
	return nil
}
