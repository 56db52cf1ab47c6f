package ratelimit

import (
	"testing"
	"time"
)

// Rate decides as the token bucket of Limiter does, event for event.
func TestRateMatchesTheTokenBucket(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		events int
		burst  int
		steps  []time.Duration // event times after t0
	}{
		{"five a minute, all at once", 5, 0, []time.Duration{0, 0, 0, 0, 0, 0, 0}},
		{"five a minute, spread", 5, 0, []time.Duration{0, 1, 2, 3, 4, 5, 12e9, 13e9, 24e9, 60e9, 61e9, 62e9, 63e9, 64e9, 65e9}},
		{"seven a minute, burst two", 7, 2, []time.Duration{0, 0, 0, 8e9, 9e9, 17e9, 18e9, 120e9, 120e9, 120e9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			l := New(Config{Events: tc.events, Burst: tc.burst, Per: time.Minute, Now: func() time.Time { return now }})
			r := Rate{Events: tc.events, Per: time.Minute, Burst: tc.burst}
			var tat time.Time
			for i, d := range tc.steps {
				now = t0.Add(d)
				_, lwait, lok := l.Take("k")
				next, wait, ok := r.Take(tat, now)
				if ok != lok {
					t.Fatalf("event %d at +%s: rate says %v, token bucket says %v", i, d, ok, lok)
				}
				if ok {
					tat = next
				} else if diff := wait - lwait; diff > time.Millisecond || diff < -time.Millisecond {
					t.Fatalf("event %d: wait %s, token bucket %s", i, wait, lwait)
				}
			}
		})
	}
}

func TestRateDisabledAndString(t *testing.T) {
	if _, _, ok := (Rate{}).Take(time.Now().Add(time.Hour), time.Now()); !ok {
		t.Fatal("a disabled rate refused")
	}
	for _, tc := range []struct {
		r    Rate
		want string
	}{{PerMinute(5), "5 per minute"}, {Rate{}, "unlimited"}, {Rate{Events: 3, Per: time.Hour}, "3 per 1h0m0s"}} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}
