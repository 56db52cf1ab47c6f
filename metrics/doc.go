// Package metrics is kfa's Prometheus instrumentation: HTTP requests by
// route template and status, latency histograms, ask-network events
// (asks, replies, completions, cancels), rate-limit rejections, and
// collectors that read the store's counters and bbolt's statistics at
// scrape time.
//
// Everything hangs off one Metrics value with its own registry; nothing is
// registered globally. The domain packages know nothing of it: events are
// counted by following the change log (Follower), and HTTP by wrapping
// the public handler (Instrument). It imports no store: a scrape reads
// Counts and BoltStats, its own types, which the process fills from
// whichever store runs.
package metrics
