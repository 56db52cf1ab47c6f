package ratelimit

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Config describes one keyed limit: Events per Per, with bursts of Burst.
type Config struct {
	Events int           // allowed events per Per; <= 0 disables the limit
	Per    time.Duration // window; default one minute
	Burst  int           // bucket size; default Events
	// MaxKeys bounds the number of tracked keys; when it is reached, idle
	// buckets are swept and, if still full, the oldest are dropped. Default 100k.
	MaxKeys int
	Now     func() time.Time // clock; default time.Now
}

// Limiter is a set of token buckets, one per key. Safe for concurrent use.
type Limiter struct {
	cfg     Config
	limit   rate.Limit
	idleFor time.Duration // a bucket idle this long is full again

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New returns a Limiter for cfg.
func New(cfg Config) *Limiter {
	if cfg.Per <= 0 {
		cfg.Per = time.Minute
	}
	if cfg.Burst <= 0 {
		cfg.Burst = cfg.Events
	}
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = 100_000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := &Limiter{cfg: cfg, buckets: make(map[string]*bucket)}
	if cfg.Events > 0 {
		l.limit = rate.Limit(float64(cfg.Events) / cfg.Per.Seconds())
		l.idleFor = time.Duration(float64(cfg.Burst) / float64(l.limit) * float64(time.Second))
	}
	return l
}

// Enabled reports whether the limiter limits anything.
func (l *Limiter) Enabled() bool { return l.cfg.Events > 0 }

// Reservation is a taken token that can be handed back.
type Reservation struct {
	r *rate.Reservation
	t time.Time
}

// Cancel returns the token, as if the event never happened (for example
// when the request it paid for was rejected for another reason).
func (r Reservation) Cancel() {
	if r.r != nil {
		r.r.CancelAt(r.t)
	}
}

// Take takes one token for key. When none is available it returns ok=false
// and how long until one is; nothing is taken then.
func (l *Limiter) Take(key string) (res Reservation, wait time.Duration, ok bool) {
	if !l.Enabled() {
		return Reservation{}, 0, true
	}
	now := l.cfg.Now()
	l.mu.Lock()
	b := l.bucketLocked(key, now)
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		l.mu.Unlock()
		return Reservation{}, l.cfg.Per, false
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		l.mu.Unlock()
		return Reservation{}, d, false
	}
	l.mu.Unlock()
	return Reservation{r: r, t: now}, 0, true
}

// Allow is Take without the reservation.
func (l *Limiter) Allow(key string) (wait time.Duration, ok bool) {
	_, wait, ok = l.Take(key)
	return wait, ok
}

// Len returns the number of tracked keys.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

func (l *Limiter) bucketLocked(key string, now time.Time) *bucket {
	if b, ok := l.buckets[key]; ok {
		b.seen = now
		return b
	}
	if len(l.buckets) >= l.cfg.MaxKeys || now.Sub(l.lastSweep) > l.idleFor {
		l.sweepLocked(now)
	}
	b := &bucket{lim: rate.NewLimiter(l.limit, l.cfg.Burst), seen: now}
	l.buckets[key] = b
	return b
}

// sweepLocked drops buckets idle long enough to have refilled: forgetting
// them changes no decision. If the map is still at its bound, it drops the
// least recently seen keys, which can only make the limiter more lenient.
func (l *Limiter) sweepLocked(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.seen) >= l.idleFor {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.cfg.MaxKeys {
		return
	}
	// Still full of active keys: drop those seen at or before the mean time
	// (always at least one: the oldest is never after the mean).
	var sum int64
	n := int64(len(l.buckets))
	for _, b := range l.buckets {
		sum += b.seen.UnixNano() / n
	}
	cut := time.Unix(0, sum)
	for k, b := range l.buckets {
		if !b.seen.After(cut) {
			delete(l.buckets, k)
		}
	}
}

// String describes the limit, e.g. "5 per minute".
func (l *Limiter) String() string {
	switch {
	case !l.Enabled():
		return "unlimited"
	case l.cfg.Per == time.Minute:
		return fmt.Sprintf("%d per minute", l.cfg.Events)
	default:
		return fmt.Sprintf("%d per %s", l.cfg.Events, l.cfg.Per)
	}
}

// Blocked reports whether key has no token left right now, without taking
// one, and how long until it has.
func (l *Limiter) Blocked(key string) (time.Duration, bool) {
	if !l.Enabled() {
		return 0, false
	}
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return 0, false
	}
	tokens := b.lim.TokensAt(now)
	if tokens >= 1 {
		return 0, false
	}
	return time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second)), true
}
