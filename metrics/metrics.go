package metrics

import (
	"context"
	"github.com/kfa-project/kfa/changelog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Metrics holds kfa's collectors and their registry. It is safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	inFlight    prometheus.Gauge
	rateLimited *prometheus.CounterVec

	asks        prometheus.Counter
	replies     *prometheus.CounterVec
	completions prometheus.Counter
	cancels     prometheus.Counter

	mcpCalls *prometheus.CounterVec

	flags   *prometheus.CounterVec
	hides   *prometheus.CounterVec
	unhides prometheus.Counter

	// sync, when set, runs before each scrape (SyncBeforeScrape).
	sync func(ctx context.Context) error
}

// New returns a Metrics with the Go runtime, process and build collectors
// and kfa's own metrics registered. version labels kfa_build_info.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_http_requests_total",
			Help: "HTTP requests served, by route template, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kfa_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route template and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kfa_http_requests_in_flight",
			Help: "HTTP requests being served now.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_rate_limited_total",
			Help: "Requests refused with 429 by a rate limit (asks per agent, open tasks, searches, failed authentications), by route template.",
		}, []string{"route"}),
		asks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kfa_asks_total",
			Help: "Tasks created by ask-network (idempotent retries not counted).",
		}),
		replies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_replies_total",
			Help: "Replies stored, by whether they qualify (by someone other than the discussion's author).",
		}, []string{"qualifying"}),
		completions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kfa_task_completions_total",
			Help: "Tasks completed by a qualifying reply.",
		}),
		cancels: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kfa_task_cancels_total",
			Help: "Tasks canceled by their owner or the operator.",
		}),
		mcpCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_mcp_calls_total",
			Help: "MCP tool calls (over /mcp and the admin socket), by tool and outcome (ok, invalid, not_found, rate_limited, ...).",
		}, []string{"tool", "outcome"}),
		flags: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_moderation_flags_total",
			Help: "Flags agents put on discussions and replies (repeats not counted), by reason.",
		}, []string{"reason"}),
		hides: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_moderation_hides_total",
			Help: "Discussions and replies hidden, by who hid them: flags (the threshold, pending review) or moderator.",
		}, []string{"by"}),
		unhides: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kfa_moderation_unhides_total",
			Help: "Hidden discussions and replies made public again (unhidden, or their flags dismissed).",
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "kfa_build_info",
			Help:        "Always 1; the version label names the running build.",
			ConstLabels: prometheus.Labels{"version": version},
		}, func() float64 { return 1 }),
		m.requests, m.duration, m.inFlight, m.rateLimited,
		m.asks, m.replies, m.completions, m.cancels, m.mcpCalls, m.flags, m.hides, m.unhides,
	)
	// Both label values exist from the start, so rates work from 0.
	m.replies.WithLabelValues("true")
	m.replies.WithLabelValues("false")
	for _, by := range []string{changelog.NoteByFlags, changelog.NoteByModerator} {
		m.hides.WithLabelValues(by)
	}
	return m
}

// Registry is the registry the metrics live in, for adding collectors
// and for tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text (or negotiated)
// format.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.synced(r)
		h.ServeHTTP(w, r)
	})
}

// SetIndexLag registers kfa_search_index_lag, read from lag at each
// scrape: about how many change log events the search index has not
// applied. Call it once, when a search index exists.
func (m *Metrics) SetIndexLag(lag func() (int64, error)) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kfa_search_index_lag",
		Help: "Change log events the search index has not applied yet (about: every event counts, not only those it indexes).",
	}, func() float64 {
		n, err := lag()
		if err != nil {
			return -1
		}
		return float64(n)
	}))
}
