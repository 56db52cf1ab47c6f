package ratelimit

import (
	"fmt"
	"time"
)

// Rate is a limit of Events per Per for one key, with bursts of Burst
// (default Events). It decides exactly as Limiter's token bucket does,
// but its whole state for a key is one time, which the caller keeps (the
// generic cell rate algorithm's theoretical arrival time): a store can
// keep it next to the data it limits, write it in the same transaction as
// the event it allowed, and so keep the limit across restarts and across
// processes sharing the store. Nothing is ever evicted, so nothing can
// make the limit more lenient.
type Rate struct {
	Events int           // allowed events per Per; <= 0 disables the limit
	Per    time.Duration // window; default one minute
	Burst  int           // events allowed at once; default Events
}

// PerMinute is a Rate of n events a minute (0 or less: no limit).
func PerMinute(n int) Rate { return Rate{Events: n, Per: time.Minute} }

// Enabled reports whether the rate limits anything.
func (r Rate) Enabled() bool { return r.Events > 0 }

// interval is the time one event costs.
func (r Rate) interval() time.Duration {
	per := r.Per
	if per <= 0 {
		per = time.Minute
	}
	return per / time.Duration(r.Events)
}

func (r Rate) burst() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return r.Events
}

// Take decides one event at now for a key whose kept time is tat (the zero
// time for a key never seen). Allowed, it returns the time to keep in
// tat's place; refused, how long until the event would be allowed, and
// tat must stay as it is (a refused event costs nothing).
func (r Rate) Take(tat, now time.Time) (next time.Time, wait time.Duration, ok bool) {
	if !r.Enabled() {
		return tat, 0, true
	}
	t := r.interval()
	if tat.Before(now) {
		tat = now
	}
	allowAt := tat.Add(-time.Duration(r.burst()-1) * t)
	if now.Before(allowAt) {
		return time.Time{}, allowAt.Sub(now), false
	}
	return tat.Add(t), 0, true
}

// String describes the rate, e.g. "5 per minute".
func (r Rate) String() string {
	switch {
	case !r.Enabled():
		return "unlimited"
	case r.Per <= 0 || r.Per == time.Minute:
		return fmt.Sprintf("%d per minute", r.Events)
	default:
		return fmt.Sprintf("%d per %s", r.Events, r.Per)
	}
}

// Exceeded is a request refused by a limit. RetryAfter says when to try
// again; Msg is shown to the client.
type Exceeded struct {
	Msg        string
	RetryAfter time.Duration
	// Reason names the limit (a sentinel of the package that set it,
	// such as tasks.ErrTooManyOpen), so that errors.Is tells refusals
	// apart; nil when the limit needs no name.
	Reason error
}

func (e *Exceeded) Error() string {
	if e.Msg == "" {
		return "rate limit exceeded"
	}
	return e.Msg
}

// Unwrap returns the reason, for errors.Is.
func (e *Exceeded) Unwrap() error { return e.Reason }
