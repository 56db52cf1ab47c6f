package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/samples"
	"github.com/kfa-project/kfa/search"
)

// IndexDir is the search index's directory inside the data directory. It
// is derived data: backups need only kfa.db, and deleting it makes the
// next start rebuild it.
const IndexDir = "index"

// openSearch seeds the sample records when asked to and the database has
// none, then opens the search index and catches it up with the change
// log, so the first search answers from every committed write.
func (s *Server) openSearch() error {
	ctx := context.Background()
	if s.cfg.SeedSamples {
		if err := seedSamples(ctx, s.core.Records, s.log); err != nil {
			return err
		}
	}
	idx, err := search.Open(ctx, search.Options{
		Dir:          filepath.Join(s.cfg.DataDir, IndexDir),
		Changes:      s.core.Store,
		Records:      s.core.Store,
		Discussions:  s.core.Store,
		Followed:     s.core.Store,
		Signals:      s.core.Store,
		Cursors:      s.core.Store,
		SynonymsFile: filepath.Join(s.cfg.DataDir, search.SynonymsFile),
		PublicURL:    s.cfg.PublicURL,
		Tick:         s.cfg.FollowTick,
		Log:          s.log,
	})
	if err != nil {
		return fmt.Errorf("open search index: %w", err)
	}
	s.index = idx
	s.core.Index = idx
	s.core.IndexLag = idx.Lag
	s.obs.m.SetIndexLag(func() (int64, error) { return idx.Lag(context.Background()) })
	// A scrape counts what committed before it, and the index's lag is
	// then what it has really not applied.
	s.obs.m.SyncBeforeScrape(s.SyncFollowers)
	return nil
}

// closeSearch stops the index's follower and closes it; the store may be
// closed after it. Closing twice is harmless.
func (s *Server) closeSearch() error {
	if s.index == nil {
		return nil
	}
	return s.index.Close()
}

// seedSamples imports the embedded sample records into an empty database.
func seedSamples(ctx context.Context, records *knowledge.Service, log *slog.Logger) error {
	p, err := records.List(ctx, "", new(1))
	if err != nil {
		return fmt.Errorf("seed samples: %w", err)
	}
	if p.Total > 0 {
		return nil
	}
	start := time.Now()
	sum, err := records.Import(ctx, samples.Records(), knowledge.ImportOptions{Strict: true})
	if err != nil {
		return fmt.Errorf("seed samples: %w", err)
	}
	if sum.Rejected > 0 {
		return fmt.Errorf("seed samples: the embedded records are invalid: %v", sum.Errors)
	}
	log.Info("imported the sample records into the empty database", "added", sum.Added,
		"took", time.Since(start).Round(time.Millisecond))
	return nil
}

// indexer is what the admin API syncs and rebuilds: the live index in kfa
// serve, otherwise the index directory, which a reindex deletes for the
// next kfa serve to rebuild.
func (c *Core) indexer(dataDir string) admin.Indexer {
	if c.Index != nil {
		return c.Index
	}
	return offlineIndex{dir: filepath.Join(dataDir, IndexDir), synonyms: filepath.Join(dataDir, search.SynonymsFile)}
}

// offlineIndex stands for the index when no server runs. Writes need no
// sync: the next kfa serve catches up from the change log.
type offlineIndex struct{ dir, synonyms string }

func (offlineIndex) Sync(context.Context) error { return nil }

// Rebuild checks the synonyms file, so that a bad one is reported now
// rather than when kfa serve next starts, and deletes the index.
func (o offlineIndex) Rebuild(context.Context) (knowledge.IndexStatus, error) {
	syn, err := search.LoadSynonyms(o.synonyms)
	if err != nil {
		return knowledge.IndexStatus{}, err
	}
	if err := os.RemoveAll(o.dir); err != nil {
		return knowledge.IndexStatus{}, fmt.Errorf("delete the search index %s: %w", o.dir, err)
	}
	return knowledge.IndexStatus{Dir: o.dir, Deleted: true, SynonymGroups: syn.Len()}, nil
}

// OpenIndex opens the search index of dataDir over core's store and
// catches it up with the change log, as kfa serve does when it starts:
// kfa mcp searches through it when no server runs. The store may be open
// read-only; only the index (derived data) is written.
func OpenIndex(ctx context.Context, core *Core, dataDir, publicURL string, log *slog.Logger) (*search.Index, error) {
	idx, err := search.Open(ctx, search.Options{
		Dir:          filepath.Join(dataDir, IndexDir),
		Changes:      core.Store,
		Records:      core.Store,
		Discussions:  core.Store,
		Followed:     core.Store,
		Signals:      core.Store,
		SynonymsFile: filepath.Join(dataDir, search.SynonymsFile),
		PublicURL:    strings.TrimRight(publicURL, "/"),
		Log:          log,
	})
	if err != nil {
		return nil, fmt.Errorf("open search index: %w", err)
	}
	return idx, nil
}
