//go:build !unix

package store

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// LockFile takes the exclusive lock kfa serve holds on the database file
// at path, so that a restore knows no process uses it while it is
// replaced. It returns ErrLocked when another process holds the lock;
// unlock releases it.
func LockFile(path string, timeout time.Duration) (unlock func() error, err error) {
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, NoFreelistSync: true})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (is kfa serve running on this data directory?)", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return bdb.Close, nil
}
