package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoadRunBound: maxOps is a count of operations, 0 included (a
// top-up with nothing to top up is no operation at all; it once meant
// "no bound" and ran the top-up's op past the end of its list), and
// unbounded leaves the duration as the only bound.
func TestLoadRunBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		maxOps int
		want   int64 // -1: at least one, stopped by the op itself
	}{
		{"none", 0, 0},
		{"negative", -1, 0},
		{"one", 1, 1},
		{"some", 7, 7},
		{"unbounded", unbounded, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var calls atomic.Int64
			r := loadRun(ctx, 4, 0, time.Hour, tc.maxOps, func(context.Context, *worker, int) error {
				if calls.Add(1) >= 50 {
					cancel() // the unbounded case's stop
				}
				return nil
			})
			switch got := calls.Load(); {
			case tc.want < 0 && got < 50:
				t.Fatalf("%d calls, want the op to run until it stopped the load", got)
			case tc.want >= 0 && (got != tc.want || int64(r.ops) != tc.want):
				t.Fatalf("%d calls, %d ops counted, want %d", got, r.ops, tc.want)
			}
		})
	}
}
