//go:build !linux

package main

// evictCache does nothing where there is no posix_fadvise: the preloaded
// servers then start and read warm.
func evictCache(string) error { return nil }
