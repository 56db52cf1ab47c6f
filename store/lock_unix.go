//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// LockFile takes the exclusive lock kfa serve holds on the database file
// at path (bbolt's flock), without reading the file, so that a restore
// knows no process uses it while it is replaced, even when the file is too
// damaged to open. It returns ErrLocked when another process holds the
// lock; unlock releases it.
func LockFile(path string, timeout time.Duration) (unlock func() error, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f.Close, nil // closing the descriptor releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("store: lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("%w: %s (is kfa serve running on this data directory?)", ErrLocked, path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
