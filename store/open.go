package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/tasks"
)

// FileName is the name of the database file inside the data directory.
const FileName = "kfa.db"

// Errors of Open.
var (
	// ErrLocked means another process holds the database file.
	ErrLocked = errors.New("store: database file is in use by another process")
	// ErrTooNew means the file was written by a newer kfa.
	ErrTooNew = errors.New("store: database schema is newer than this kfa")
)

// Options tune Open. The zero value is usable.
type Options struct {
	// LockTimeout is how long Open waits for another process to release the
	// file lock. Default 1s.
	LockTimeout time.Duration
	// BatchDelay is the longest a write waits to be grouped with others
	// into one transaction (group commit). Default 2ms.
	BatchDelay time.Duration
	// ReadOnly opens the file with a shared lock and refuses writes.
	ReadOnly bool
}

// initialMmapSize is how much of the file bbolt maps at first: address
// space, not memory (only pages that are read become resident). While the
// file fits, a growing file is never remapped, and a remap is what makes
// bbolt stop every reader and copy every dirty node of the writing
// transaction. 1 GiB on 64-bit platforms; bbolt's default on others.
const initialMmapSize = (1 << 30) * (strconv.IntSize / 64)

// DB is the bbolt store. It is safe for concurrent use. The commands are
// written once (package commands) and run on this store's primitives
// (engine.go); the reads are this store's own.
type DB struct {
	*commands.Commands
	db       *bolt.DB
	path     string
	readOnly bool
	secret   []byte           // keys page tokens; made once per file
	commits  *committer       // nil when read-only
	logWake  changelog.Signal // woken by commits that append to the log
	// trimStop stops trimLoop (nil when read-only), which closes trimDone.
	trimStop, trimDone chan struct{}
}

// Open opens (creating if needed) the database file at path and brings its
// schema up to date. The directory is created with mode 0700 and the file
// with 0600.
func Open(path string, opts Options) (*DB, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if opts.BatchDelay <= 0 {
		opts.BatchDelay = 2 * time.Millisecond
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("store: create data directory: %w", err)
		}
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         opts.LockTimeout,
		ReadOnly:        opts.ReadOnly,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: initialMmapSize,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (waited %s; is kfa serve running on this data directory?)", ErrLocked, path, opts.LockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &DB{db: bdb, path: path, readOnly: opts.ReadOnly}
	s.Commands = commands.New(s)
	if err := s.migrate(); err != nil {
		_ = bdb.Close()
		return nil, err
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		s.secret = append([]byte(nil), tx.Bucket(bucketMeta).Get(metaSecret)...)
		return nil
	}); err != nil {
		_ = bdb.Close()
		return nil, err
	}
	if !s.readOnly {
		s.commits = newCommitter(bdb, opts.BatchDelay)
		s.trimStop, s.trimDone = make(chan struct{}), make(chan struct{})
		go s.trimLoop(s.trimStop, s.trimDone)
	}
	return s, nil
}

// Close closes the file. Pending group commits finish first.
func (s *DB) Close() error {
	if s.commits != nil {
		s.commits.close()
	}
	if s.trimStop != nil {
		close(s.trimStop)
		<-s.trimDone
		s.trimStop = nil
	}
	return s.db.Close()
}

// Path returns the file path.
func (s *DB) Path() string { return s.path }

// update runs fn in a group commit. fn may run more than once and must
// leave no effect outside tx; a non-nil error rolls its changes back.
func (s *DB) update(fn func(tx *bolt.Tx) error) error {
	if s.readOnly {
		return errReadOnly
	}
	return s.commits.do(writeOnly(fn))
}

// exec runs command cmd. It decides first in a read transaction, where a
// refusal, or a decision with nothing to write, is answered without
// queuing a write at all; otherwise it runs in a group commit, where it
// loads and decides again on the state as it is by then. cmd may run more
// than once and must leave no effect outside tx.
func (s *DB) exec(cmd command) error {
	var writes bool
	if err := s.db.View(func(tx *bolt.Tx) error {
		write, err := decide(cmd, tx)
		writes = write != nil
		return err
	}); err != nil || !writes {
		return err
	}
	if s.readOnly {
		return errReadOnly
	}
	return s.commits.do(cmd)
}

var errReadOnly = errors.New("store: opened read-only")

// Secret returns the per-file secret that keys page tokens.
func (s *DB) Secret() []byte { return append([]byte(nil), s.secret...) }

// Ping checks that the store answers a read transaction.
func (s *DB) Ping() error { return s.db.View(func(*bolt.Tx) error { return nil }) }

// The domain stores this package implements.
var (
	_ agents.Store      = (*DB)(nil)
	_ tasks.Store       = (*DB)(nil)
	_ discussions.Store = (*DB)(nil)
	_ moderation.Store  = (*DB)(nil)
	_ push.ConfigStore  = (*DB)(nil)
	_ push.OutboxStore  = (*DB)(nil)
)
