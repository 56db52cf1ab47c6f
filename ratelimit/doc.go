// Package ratelimit holds the rate limits of kfa.
//
// A Limiter is a set of in-memory token buckets (golang.org/x/time/rate),
// one per key, for per-address limits (searches, failed authentications).
// It evicts buckets that have been idle long enough to be full again, so
// millions of distinct keys cannot exhaust memory.
//
// A Rate is the same token bucket kept as one time per key, for the
// per-agent limits on writes (asks, replies): the store keeps that time
// with the agent's data and applies the limit in the transaction of the
// write, so a restart forgets nothing and no eviction can loosen it.
//
// Time is injected (Config.Now, Rate.Take's now) so tests decide it;
// nothing here sleeps.
package ratelimit
