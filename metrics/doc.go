// Package metrics is kfa's Prometheus instrumentation: HTTP requests by
// route template and status, latency histograms, ask-network events
// (asks, replies, completions, cancels), rate-limit rejections, and
// collectors that read the store's counters and bbolt's statistics at
// scrape time.
//
// Everything hangs off one Metrics value with its own registry; nothing is
// registered globally. The domain packages know nothing of it: events are
// counted by wrapping the tasks and discussions stores (WrapTasks,
// WrapDiscussions), and HTTP by wrapping the public handler (Instrument).
package metrics
