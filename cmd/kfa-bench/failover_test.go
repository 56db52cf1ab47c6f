package main

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgha"
)

// TestSummarizeFailover: the rates before, during and after come from the
// quarter seconds between the crash, every process back, and the end;
// the recovery is the end of the first quarter second after the promotion
// at 80% of the rate before.
func TestSummarizeFailover(t *testing.T) {
	counts := []int{0, 0, 0, 0, 10, 10, 10, 10, 10, 10, 10, 10, 0, 0, 2, 7, 9, 10, 10, 10}
	l := &failLoad{slots: make([]atomic.Int64, len(counts))}
	for i, k := range counts {
		l.slots[i].Store(int64(k))
	}
	var fb FailoverBench
	q := failoverSlot
	summarizeFailover(&fb, l, 12*q, 13*q, 15*q, 20*q)
	if fb.Before != 40 { // 10 a quarter second from 1 s to the crash
		t.Errorf("before = %v, want 40", fb.Before)
	}
	if want := float64(0+0+2+7) / (4 * q.Seconds()); fb.Dip != want {
		t.Errorf("dip = %v, want %v", fb.Dip, want)
	}
	if want := float64(9+10+10+10) / (4 * q.Seconds()); fb.After != want {
		t.Errorf("after = %v, want %v", fb.After, want)
	}
	if want := ms(17*q - 13*q); fb.RecoveredMS != want { // slot 16 (9 asks) is the first at 80%
		t.Errorf("recovered = %v ms, want %v", fb.RecoveredMS, want)
	}
	if fb.CrashAt != 12 || len(fb.Timeline) != len(counts) {
		t.Errorf("crash at %d, timeline %v", fb.CrashAt, fb.Timeline)
	}

	fb.FirstAskMS = []float64{228, 467}
	out := strings.Join(failoverLines(fb), "\n")
	for _, want := range []string{"asks/s 40 before", "process 1 228 ms, process 2 467 ms", "back to 80% of the rate 1000 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if out := failoverLines(FailoverBench{Skipped: "no binaries"}); len(out) != 1 || !strings.Contains(out[0], "not measured (no binaries)") {
		t.Errorf("skipped: %q", out)
	}
}

// TestMeasureFailover runs the phase on a real pair: both processes ask
// again within 10 s of the promotion, and the load goes on after it.
func TestMeasureFailover(t *testing.T) {
	pgha.Require(t)
	dir := t.TempDir()
	bin, err := buildKFA(os.Getenv("KFA_TEST_BIN"), dir)
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{dir: dir, kfaBin: bin, batchDelay: 2 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fb := b.measureFailover(ctx)
	for _, line := range failoverLines(fb) {
		t.Log(line)
	}
	if fb.Skipped != "" {
		t.Fatal(fb.Skipped)
	}
	for i, f := range fb.FirstAskMS {
		if f > 10000 {
			t.Errorf("process %d asked again %.0f ms after the promotion, want under 10 s", i+1, f)
		}
	}
	if fb.Before == 0 || fb.After == 0 || fb.Failed != 0 {
		t.Errorf("before %v/s, after %v/s, %d failures", fb.Before, fb.After, fb.Failed)
	}
}
