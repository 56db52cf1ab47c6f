// Package ratelimit holds keyed token-bucket limiters (golang.org/x/time/rate)
// for per-agent and per-address limits. A Limiter keeps one bucket per key
// and evicts buckets that have been idle long enough to be full again, so
// millions of distinct keys cannot exhaust memory.
//
// Time is injected (Config.Now) so tests decide it; nothing here sleeps.
package ratelimit
