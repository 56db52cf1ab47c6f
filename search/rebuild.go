package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/kfa-project/kfa/knowledge"
)

// Rebuild builds the whole index again from the store while the current
// one keeps answering searches, then swaps it in. `kfa records reindex`
// runs it on a live server.
func (x *Index) Rebuild(ctx context.Context) (knowledge.IndexStatus, error) {
	start := time.Now()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.rec == nil {
		return knowledge.IndexStatus{}, ErrClosed
	}
	recDir := filepath.Join(x.o.Dir, recordsDir)
	discDir := filepath.Join(x.o.Dir, discussionsDir)
	newRec, newDisc, st, discCount, err := x.buildAside(ctx, recDir+rebuildSuffix, discDir+rebuildSuffix)
	if err != nil {
		return knowledge.IndexStatus{}, err
	}

	// Swap: searches wait for the few file operations below.
	x.mu.Lock()
	err = x.swap(recDir, discDir, newRec, newDisc)
	x.mu.Unlock()
	if err != nil {
		return knowledge.IndexStatus{}, err
	}
	x.applied, x.discCount = st, discCount
	x.seq.Store(st.Seq)
	x.o.Log.Info("search index rebuilt", "feed_seq", st.Seq, "took", time.Since(start).Round(time.Millisecond))
	// New writes may have come while the swap ran.
	if _, err := x.catchUp(ctx); err != nil {
		return knowledge.IndexStatus{}, err
	}
	status, err := x.Status(ctx)
	status.Rebuilt = true
	return status, err
}

// buildAside builds complete, closed indexes in the given directories.
func (x *Index) buildAside(ctx context.Context, recDir, discDir string) (rec, disc string, st appliedState, discCount int, err error) {
	for _, d := range []string{recDir, discDir} {
		if err := os.RemoveAll(d); err != nil {
			return "", "", st, 0, fmt.Errorf("search: clear %s: %w", d, err)
		}
	}
	idx, err := createIndex(recDir, x.recMapping)
	if err != nil {
		return "", "", st, 0, err
	}
	if st, err = x.buildRecords(ctx, idx); err != nil {
		_ = idx.Close()
		return "", "", st, 0, err
	}
	if err := idx.Close(); err != nil {
		return "", "", st, 0, fmt.Errorf("search: close rebuilt index: %w", err)
	}
	if x.o.Discussions == nil {
		return recDir, "", st, 0, nil
	}
	didx, err := createIndex(discDir, x.discMapping)
	if err != nil {
		return "", "", st, 0, err
	}
	discCount, err = x.reconcileDiscussions(ctx, didx)
	if err == nil {
		err = flushDiscussions(didx)
	}
	if cerr := didx.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("search: close rebuilt discussions index: %w", cerr)
	}
	if err != nil {
		return "", "", st, 0, err
	}
	return recDir, discDir, st, discCount, nil
}

// swap replaces the live indexes with the ones built aside. The caller
// holds mu for writing.
func (x *Index) swap(recDir, discDir, newRec, newDisc string) error {
	pairs := []struct {
		live  *bleve.Index
		dir   string
		built string
		name  string
	}{{&x.rec, recDir, newRec, "records"}, {&x.disc, discDir, newDisc, "discussions"}}
	for _, p := range pairs {
		if p.built == "" {
			continue
		}
		if *p.live != nil {
			if err := (*p.live).Close(); err != nil {
				x.o.Log.Warn("closing the replaced search index failed", "index", p.name, "err", err.Error())
			}
			*p.live = nil
		}
		if err := os.RemoveAll(p.dir); err != nil {
			return fmt.Errorf("search: remove replaced %s index: %w", p.name, err)
		}
		if err := os.Rename(p.built, p.dir); err != nil {
			return fmt.Errorf("search: move rebuilt %s index in place: %w", p.name, err)
		}
		idx, err := tryOpen(p.dir)
		if err != nil {
			return fmt.Errorf("search: open rebuilt %s index: %w", p.name, err)
		}
		*p.live = idx
	}
	return nil
}
