package ratelimit

import (
	"context"
	"testing"
	"time"
)

// TestQuotaMatchesDecisions: whatever state a key is in, Remaining is
// exactly how many events would be allowed now, for both kinds of limit.
func TestQuotaMatchesDecisions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  int
		taken   int           // events taken at the start
		elapsed time.Duration // then this much time passes
		want    int           // remaining
		reset   time.Duration
	}{
		{"fresh", 5, 0, 0, 5, 0},
		{"one taken", 5, 1, 0, 4, 12 * time.Second},
		{"all taken", 5, 5, 0, 0, time.Minute},
		{"all taken, one back", 5, 5, 12 * time.Second, 1, 48 * time.Second},
		{"all taken, part of one back", 5, 5, 11 * time.Second, 0, 49 * time.Second},
		{"refilled", 5, 5, time.Minute, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
			// Rate: the store's kept time.
			r := PerMinute(tc.events)
			var tat time.Time
			for range tc.taken {
				next, _, ok := r.Take(tat, start)
				if !ok {
					t.Fatal("refused while filling")
				}
				tat = next
			}
			now := start.Add(tc.elapsed)
			q, ok := r.Quota("ask", tat, now)
			if !ok || q.Remaining != tc.want || q.Reset != tc.reset || q.Limit != tc.events || q.Window != time.Minute {
				t.Fatalf("Rate.Quota = %+v, want remaining %d reset %s", q, tc.want, tc.reset)
			}
			allowed := 0
			for {
				next, _, ok := r.Take(tat, now)
				if !ok {
					break
				}
				tat, allowed = next, allowed+1
			}
			if allowed != tc.want {
				t.Fatalf("Rate allowed %d, quota said %d", allowed, tc.want)
			}

			// Limiter: the in-memory buckets.
			clk := &fakeClock{t: start}
			l := New(Config{Events: tc.events, Per: time.Minute, Now: clk.Now})
			for range tc.taken {
				l.Allow("k")
			}
			clk.Advance(tc.elapsed)
			lq, ok := l.Quota("request", "k")
			if !ok || lq.Remaining != tc.want || lq.Limit != tc.events {
				t.Fatalf("Limiter.Quota = %+v, want remaining %d", lq, tc.want)
			}
			if d := lq.Reset - tc.reset; d < -time.Millisecond || d > time.Millisecond {
				t.Fatalf("Limiter reset %s, want %s", lq.Reset, tc.reset)
			}
			allowed = 0
			for {
				if _, ok := l.Allow("k"); !ok {
					break
				}
				allowed++
			}
			if allowed != tc.want {
				t.Fatalf("Limiter allowed %d, quota said %d", allowed, tc.want)
			}
		})
	}
}

func TestQuotaDisabled(t *testing.T) {
	if _, ok := PerMinute(0).Quota("ask", time.Time{}, time.Now()); ok {
		t.Fatal("a disabled rate has a quota")
	}
	if _, ok := New(Config{}).Quota("request", "k"); ok {
		t.Fatal("a disabled limiter has a quota")
	}
}

func TestReport(t *testing.T) {
	Note(context.Background(), Quota{Name: "x"}) // no report: nothing happens
	ctx, r := WithReport(context.Background())
	if _, ok := r.Quota(); ok {
		t.Fatal("empty report has a quota")
	}
	Note(ctx, Quota{Name: "request"})
	Note(ctx, Quota{Name: "ask"})
	if q, ok := r.Quota(); !ok || q.Name != "ask" {
		t.Fatalf("report: %+v %v", q, ok)
	}
}
