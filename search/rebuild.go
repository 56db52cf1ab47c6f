package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/kfa-project/kfa/knowledge"
)

// Rebuild builds the whole index again from the store, with the synonyms
// file read again, while the current one keeps answering searches, then
// swaps it in. `kfa records reindex` runs it on a live server. A synonyms
// file that cannot be used is an error, and the current index stays.
func (x *Index) Rebuild(ctx context.Context) (knowledge.IndexStatus, error) {
	return x.rebuild(ctx, "asked for (kfa records reindex)")
}

// rebuild is Rebuild, logging why.
func (x *Index) rebuild(ctx context.Context, reason string) (knowledge.IndexStatus, error) {
	start := time.Now()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.rec == nil {
		return knowledge.IndexStatus{}, ErrClosed
	}
	x.o.Log.Info("rebuilding the search index", "reason", reason)
	syn, m, err := x.loadMapping()
	if err != nil {
		return knowledge.IndexStatus{}, err
	}
	dir := filepath.Join(x.o.Dir, recordsDir)
	instance, _ := x.rec.GetInternal(keyInstance)
	st, err := x.buildAside(ctx, dir+rebuildSuffix, m, syn.Digest(), instance)
	if err != nil {
		return knowledge.IndexStatus{}, err
	}

	// Swap: searches wait for the few file operations below.
	x.mu.Lock()
	err = x.swap(dir, dir+rebuildSuffix)
	if err == nil {
		x.syn, x.an = syn, newAnalysis(m)
	}
	x.mu.Unlock()
	if err != nil {
		return knowledge.IndexStatus{}, err
	}
	x.setApplied(st)
	x.o.Log.Info("search index rebuilt", "log_position", st.Pos.String(), "synonym_groups", syn.Len(),
		"took", time.Since(start).Round(time.Millisecond))
	// New writes may have come while the build ran.
	if _, err := x.catchUp(ctx); err != nil {
		return knowledge.IndexStatus{}, err
	}
	status, err := x.Status(ctx)
	status.Rebuilt = true
	return status, err
}

// buildAside builds a complete, closed index in dir that keeps the
// instance id of the one it replaces.
func (x *Index) buildAside(ctx context.Context, dir string, m *mapping.IndexMappingImpl, synonyms string, instance []byte) (appliedState, error) {
	if err := os.RemoveAll(dir); err != nil {
		return appliedState{}, fmt.Errorf("search: clear %s: %w", dir, err)
	}
	idx, err := createIndex(dir, m, synonyms)
	if err != nil {
		return appliedState{}, err
	}
	if len(instance) > 0 {
		err = idx.SetInternal(keyInstance, instance)
	}
	var st appliedState
	if err == nil {
		st, err = x.build(ctx, idx, true)
	}
	if cerr := idx.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("search: close rebuilt index: %w", cerr)
	}
	return st, err
}

// swap replaces the live index with the one built aside. The caller
// holds mu for writing.
func (x *Index) swap(dir, built string) error {
	if err := x.rec.Close(); err != nil {
		x.o.Log.Warn("closing the replaced search index failed", "err", err.Error())
	}
	x.rec = nil
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("search: remove the replaced index: %w", err)
	}
	if err := os.Rename(built, dir); err != nil {
		return fmt.Errorf("search: move the rebuilt index in place: %w", err)
	}
	idx, err := tryOpen(dir)
	if err != nil {
		return fmt.Errorf("search: open the rebuilt index: %w", err)
	}
	x.rec = idx
	x.pending, x.persisted = 0, nil // a mark of the old index may never be called back
	return nil
}
