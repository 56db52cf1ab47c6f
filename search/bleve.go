package search

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Keys of bleve's internal storage, written in the same batch as the
// documents they describe.
var (
	keySchema   = []byte("kfa:schema")   // schemaVersion of the mapping
	keyFeed     = []byte("kfa:feed")     // appliedState
	keySynonyms = []byte("kfa:synonyms") // Synonyms.Digest of the mapping
	keyInstance = []byte("kfa:instance") // a random id: the index's durable cursor is named by it
)

// openIndex opens the bleve index at dir, or creates it. An index that
// cannot be opened (corrupt, half written, from an incompatible bleve) or
// that was built with another schemaVersion is deleted and created anew:
// it is derived data. fresh reports a newly created, empty index.
func openIndex(dir string, m *mapping.IndexMappingImpl, synonyms string, log *slog.Logger) (idx bleve.Index, fresh bool, err error) {
	if _, err := os.Stat(dir); err == nil {
		idx, err := tryOpen(dir)
		if err == nil {
			v, gerr := idx.GetInternal(keySchema)
			if gerr == nil && string(v) == schemaVersion {
				return idx, false, nil
			}
			_ = idx.Close()
			if gerr != nil {
				err = gerr
			} else {
				err = fmt.Errorf("built by schema %q, this kfa uses %q", v, schemaVersion)
			}
		}
		log.Warn("search index unusable; rebuilding it from the store", "dir", dir, "reason", err.Error())
		if err := os.RemoveAll(dir); err != nil {
			return nil, false, fmt.Errorf("search: remove unusable index %s: %w", dir, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	idx, err = createIndex(dir, m, synonyms)
	return idx, true, err
}

// runtimeConfig lets a batch return once it is searchable rather than
// once it is on disk: the index is derived, and the feed position is
// written in the same batch as the documents, so after a crash the index
// resumes from whatever batch did reach the disk.
//
// With nap, bleve's persister waits persisterNap before each write to
// disk, and the batches of that time reach the disk as one segment,
// merged in memory. Without it, each of the follower's passes (one per
// followGap under load) became a segment file that the merger then
// rewrote again and again as it merged the small files into larger ones:
// over a third of the server's CPU per ask (issue 24). What is not yet
// on disk is searchable all the same, and a crash loses only work the
// follower does again from the change log. A build does not nap: it
// ends by waiting for the disk (flush), which would wait out the nap.
func runtimeConfig(nap bool) map[string]any {
	c := map[string]any{"unsafe_batch": true}
	if nap {
		c["scorchPersisterOptions"] = map[string]any{"PersisterNapTimeMSec": int(persisterNap / time.Millisecond)}
	}
	return c
}

// persisterNap is how long bleve's persister gathers batches in memory
// before it writes them to disk as one segment (runtimeConfig). It is
// also what flushing an index that follows the log can wait (Close).
const persisterNap = time.Second

// createIndex makes an empty index at dir stamped with schemaVersion and
// the digest of the synonyms m folds, to build: its persister does not
// nap (runtimeConfig), and reopen opens it to follow the log.
func createIndex(dir string, m *mapping.IndexMappingImpl, synonyms string) (bleve.Index, error) {
	idx, err := bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, runtimeConfig(false))
	if err != nil {
		return nil, fmt.Errorf("search: create index %s: %w", dir, err)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	b := idx.NewBatch()
	b.SetInternal(keySchema, []byte(schemaVersion))
	b.SetInternal(keySynonyms, []byte(synonyms))
	b.SetInternal(keyInstance, []byte(hex.EncodeToString(id[:])))
	if err := idx.Batch(b); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("search: stamp index %s: %w", dir, err)
	}
	return idx, nil
}

// flushTimeout bounds the wait for an index to reach the disk.
const flushTimeout = time.Minute

// flush writes key and value into idx's internal storage (the records
// index's feed position, say) and waits until everything indexed so far
// is on disk. Batches return once searchable (see runtimeConfig) and
// closing does not write what is pending, so an index is flushed before it
// is closed: a rebuilt index must be whole, and a shut-down one should not
// make the next start redo work.
func flush(idx bleve.Index, key, value []byte) error {
	persisted := make(chan error, 1)
	b := idx.NewBatch()
	b.SetInternal(key, value)
	b.SetPersistedCallback(func(err error) { persisted <- err })
	if err := idx.Batch(b); err != nil {
		return err
	}
	select {
	case err := <-persisted:
		return err
	case <-time.After(flushTimeout):
		return fmt.Errorf("search: the index did not reach the disk within %s", flushTimeout)
	}
}

// tryOpen opens an existing index to follow the log, turning a panic on
// damaged files into an error.
func tryOpen(dir string) (idx bleve.Index, err error) {
	defer func() {
		if r := recover(); r != nil {
			idx, err = nil, fmt.Errorf("opening panicked: %v", r)
		}
	}()
	return bleve.OpenUsing(dir, runtimeConfig(true))
}

// reopen closes idx, built and flushed in dir, and opens it again to
// follow the log.
func reopen(idx bleve.Index, dir string) (bleve.Index, error) {
	if err := idx.Close(); err != nil {
		return nil, fmt.Errorf("search: close the built index %s: %w", dir, err)
	}
	idx, err := tryOpen(dir)
	if err != nil {
		return nil, fmt.Errorf("search: open the built index %s: %w", dir, err)
	}
	return idx, nil
}
