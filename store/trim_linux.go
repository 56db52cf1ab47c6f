//go:build linux

package store

import (
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// dropMappedPages unmaps every page of the file from the process's memory
// map (madvise MADV_DONTNEED), inside a read transaction, which keeps
// bbolt from remapping the file meanwhile. The pages stay in the kernel's
// page cache: the next read of one maps it again, a minor fault, without
// touching the disk. See trimLoop.
func (s *DB) dropMappedPages() error {
	return s.db.View(func(tx *bolt.Tx) error {
		data, size := s.db.Info().Data, uintptr(tx.Size())
		if data == 0 || size == 0 {
			return nil
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, data, size, syscall.MADV_DONTNEED); errno != 0 {
			return errno
		}
		return nil
	})
}
