//go:build !linux

package store

// dropMappedPages does nothing here: the pages of the memory map are
// unmapped on Linux only (trim_linux.go).
func (s *DB) dropMappedPages() error { return nil }
