//go:build !linux

package search

import "time"

// threadCPU reports that no per-thread CPU clock is read here.
func threadCPU() (time.Duration, bool) { return 0, false }
