package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kfa-project/kfa/push"
)

// PushMetrics count push notification attempts; its Attempted is the
// delivery worker's observer.
type PushMetrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
}

// Push registers the push notification metrics and returns the
// worker's observer. Call it once.
func (m *Metrics) Push() *PushMetrics {
	p := &PushMetrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_push_deliveries_total",
			Help: "Push notification attempts by outcome: delivered (2xx), retried (a temporary failure; tried again later), " +
				"failed (a permanent failure, or the retry period used up).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kfa_push_delivery_latency_seconds",
			Help:    "Time from a task's transition to the receiver's 2xx answer, retries included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600},
		}),
	}
	for _, o := range []string{"delivered", "retried", "failed"} {
		p.outcomes.WithLabelValues(o)
	}
	m.reg.MustRegister(p.outcomes, p.latency)
	return p
}

// Attempted counts one recorded attempt of d.
func (p *PushMetrics) Attempted(d push.Delivery, a push.Attempt) {
	switch a.Outcome {
	case push.OutcomeDelivered:
		p.outcomes.WithLabelValues("delivered").Inc()
		p.latency.Observe(max(0, a.At.Sub(d.CreatedAt).Seconds()))
	case push.OutcomeRetry:
		p.outcomes.WithLabelValues("retried").Inc()
	default:
		p.outcomes.WithLabelValues("failed").Inc()
	}
}

// WatchOutbox registers the outbox gauges, read from stats at each
// scrape: the queue depth and the age of the oldest pending delivery.
// Call it once.
func (m *Metrics) WatchOutbox(stats func() (push.OutboxStats, error), now func() time.Time) {
	read := func(f func(push.OutboxStats) float64) func() float64 {
		return func() float64 {
			st, err := stats()
			if err != nil {
				return -1
			}
			return f(st)
		}
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kfa_push_queue_depth",
			Help: "Push notification deliveries pending (not yet delivered nor failed).",
		}, read(func(st push.OutboxStats) float64 { return float64(st.Pending) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kfa_push_oldest_pending_age_seconds",
			Help: "Age of the oldest pending push notification delivery (since its task's transition); 0 when none is pending.",
		}, read(func(st push.OutboxStats) float64 {
			if st.OldestPending.IsZero() {
				return 0
			}
			return max(0, now().Sub(st.OldestPending).Seconds())
		})),
	)
}
