package store

import "time"

// The file is memory-mapped, and every page a read touches stays in the
// process's RSS until it is unmapped, with the neighbours the kernel maps
// around each fault. The followers read every page a commit writes soon
// after (the new tasks, discussions and log entries), so the mapped part
// of a server's RSS grew with everything written since it started: 30
// MiB of about 90 after 11,000 asks, 60 of 124 after 22,000 (issue 32).
// Those are clean pages of the kernel's page cache, not memory kfa
// holds, but they count in RSS, and in what the kernel's OOM killer
// weighs. A writable store unmaps them every trimEvery (the pages stay
// cached: the next read of one maps it again, a minor fault), so the
// mapped part holds what the last second touched.

// trimEvery is how often a writable store unmaps the file's pages.
const trimEvery = time.Second

// trimLoop unmaps the file's pages every trimEvery until stop is closed,
// then closes done.
func (s *DB) trimLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(trimEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = s.dropMappedPages() // an error costs RSS only
		}
	}
}
