package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Quota is where one caller stands against one limit: what the RateLimit
// header fields (IETF draft) tell a client.
type Quota struct {
	Name      string        // which limit, e.g. "ask" or "request"
	Limit     int           // events per Window
	Window    time.Duration // the limit's window
	Remaining int           // events allowed right now
	Reset     time.Duration // until the whole quota is back
}

// Quota is where key stands against l now, without taking anything. ok is
// false for a disabled limiter.
func (l *Limiter) Quota(name, key string) (Quota, bool) {
	if !l.Enabled() {
		return Quota{}, false
	}
	q := Quota{Name: name, Limit: l.cfg.Events, Window: l.cfg.Per, Remaining: l.cfg.Burst}
	now := l.cfg.Now()
	l.mu.Lock()
	b, ok := l.buckets[key]
	var tokens float64
	if ok {
		tokens = b.lim.TokensAt(now)
	}
	l.mu.Unlock()
	if !ok {
		return q, true
	}
	if tokens < 0 {
		tokens = 0
	}
	q.Remaining = int(tokens)
	if missing := float64(l.cfg.Burst) - tokens; missing > 0 {
		q.Reset = time.Duration(missing / float64(l.limit) * float64(time.Second))
	}
	return q, true
}

// Quota is where a key whose kept time is tat stands against r at now.
// ok is false for a disabled rate.
func (r Rate) Quota(name string, tat, now time.Time) (Quota, bool) {
	if !r.Enabled() {
		return Quota{}, false
	}
	per := r.Per
	if per <= 0 {
		per = time.Minute
	}
	q := Quota{Name: name, Limit: r.Events, Window: per, Remaining: r.burst()}
	if !tat.After(now) {
		return q, true
	}
	// Every interval of tat ahead of now is one event not yet refilled.
	d, t := tat.Sub(now), r.interval()
	used := int((d + t - 1) / t)
	q.Remaining = max(r.burst()-used, 0)
	q.Reset = d
	return q, true
}

// Report carries, through a request's context, the quota the request
// counted against, from where it is spent to where headers are written.
// The most specific limit wins: a later Note replaces an earlier one.
type Report struct {
	mu  sync.Mutex
	q   Quota
	set bool
}

type reportKey struct{}

// WithReport returns ctx carrying a new Report.
func WithReport(ctx context.Context) (context.Context, *Report) {
	r := &Report{}
	return context.WithValue(ctx, reportKey{}, r), r
}

// Note records q as the quota of ctx's request, if ctx carries a Report.
func Note(ctx context.Context, q Quota) {
	if r, ok := ctx.Value(reportKey{}).(*Report); ok {
		r.mu.Lock()
		r.q, r.set = q, true
		r.mu.Unlock()
	}
}

// Quota returns the quota noted last, if any.
func (r *Report) Quota() (Quota, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.q, r.set
}
