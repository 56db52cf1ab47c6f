package store

import (
	"errors"
	"fmt"
	"io"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Backup writes a consistent copy of the whole file to w from one read
// transaction: writers go on committing while it runs, and the copy is the
// file as of the moment the transaction began. size, when not nil, is told
// the exact number of bytes that will follow before the first is written
// (an HTTP handler sends it as Content-Length, so a cut stream is noticed).
func (s *DB) Backup(w io.Writer, size func(int64)) (int64, error) {
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		if size != nil {
			size(tx.Size())
		}
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("store: backup: %w", err)
	}
	return n, nil
}

// ErrNotKfa means a bbolt file holds no kfa schema.
var ErrNotKfa = errors.New("store: not a kfa database")

// VerifyFile checks the database file at path without changing it: it is
// opened read-only, its schema version must be one this kfa can open, and
// then it gets the whole of Check. A file of an older schema gets bbolt's
// check only (the kfa invariants are written for the current layout; kfa
// serve migrates the file on start). The error is for a file that cannot
// be checked at all; problems found are in the report.
func VerifyFile(path string, timeout time.Duration) (CheckReport, error) {
	if timeout <= 0 {
		timeout = time.Second
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return CheckReport{}, fmt.Errorf("%w: %s", ErrLocked, path)
	}
	if err != nil {
		return CheckReport{}, fmt.Errorf("store: open %s: %w", path, err)
	}
	defer bdb.Close()
	rep := CheckReport{Path: path}
	err = bdb.View(func(tx *bolt.Tx) error {
		rep.SchemaVersion = schemaOf(tx)
		switch {
		case rep.SchemaVersion == 0:
			return fmt.Errorf("%w: %s has no schema version", ErrNotKfa, path)
		case rep.SchemaVersion > SchemaVersion():
			return fmt.Errorf("%w: %s has schema version %d, this kfa understands up to %d; use a newer kfa",
				ErrTooNew, path, rep.SchemaVersion, SchemaVersion())
		}
		// No writer can run on a read-only handle, so bbolt's check may run
		// in this read transaction.
		checkBolt(tx, &rep)
		if rep.SchemaVersion == SchemaVersion() {
			return checkInvariants(tx, &rep)
		} else {
			rep.Notes = append(rep.Notes, fmt.Sprintf("schema version %d is older than %d: kfa invariants are checked after kfa serve migrates the file",
				rep.SchemaVersion, SchemaVersion()))
		}
		return nil
	})
	if err != nil {
		return CheckReport{}, err
	}
	return rep, nil
}
