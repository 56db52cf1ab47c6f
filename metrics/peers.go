package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// PeerStat is one peer as the metrics read it at a scrape.
type PeerStat struct {
	Name       string
	State      string // ok, failing, paused
	LagSeconds float64
	Documents  int
}

// PeerMetrics count what the federation runtime does with each peer; it
// is the runtime's observer.
type PeerMetrics struct {
	errors   *prometheus.CounterVec
	forwards *prometheus.CounterVec
}

// Peers registers the federation's metrics: the peers' gauges, read from
// read at each scrape, and the runtime's counters, which it returns.
// Call it once.
func (m *Metrics) Peers(read func() ([]PeerStat, error)) *PeerMetrics {
	p := &PeerMetrics{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_peer_errors_total",
			Help: "Failed tries with a peer, by job: follow (a pass of its change feed) or forward (a forwarded ask or a poll of its answers).",
		}, []string{"peer", "job"}),
		forwards: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kfa_peer_forwards_total",
			Help: "Asks forwarded to a peer (sent), and answers that came back from it (answered).",
		}, []string{"peer", "outcome"}),
	}
	m.reg.MustRegister(p.errors, p.forwards, &peerCollector{read: read})
	return p
}

// Failed counts a failed try of job with peer.
func (p *PeerMetrics) Failed(peer, job string) { p.errors.WithLabelValues(peer, job).Inc() }

// Forwarded counts an ask sent to peer.
func (p *PeerMetrics) Forwarded(peer string) { p.forwards.WithLabelValues(peer, "sent").Inc() }

// Answered counts an answer that came back from peer.
func (p *PeerMetrics) Answered(peer string) { p.forwards.WithLabelValues(peer, "answered").Inc() }

// peerCollector reads the peers at each scrape.
type peerCollector struct {
	read func() ([]PeerStat, error)
}

var (
	peerLag = prometheus.NewDesc("kfa_peer_lag_seconds",
		"How far this server's follower is behind a peer's change feed: the time since it last read the whole feed.",
		[]string{"peer"}, nil)
	peerDocs = prometheus.NewDesc("kfa_peer_documents",
		"Documents followed from a peer.", []string{"peer"}, nil)
	peerState = prometheus.NewDesc("kfa_peer_state",
		"A peer's state: 1 for its state (ok, failing, paused), 0 for the others.", []string{"peer", "state"}, nil)
)

// Describe implements prometheus.Collector.
func (c *peerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- peerLag
	ch <- peerDocs
	ch <- peerState
}

// Collect implements prometheus.Collector.
func (c *peerCollector) Collect(ch chan<- prometheus.Metric) {
	ps, err := c.read()
	if err != nil {
		return
	}
	for _, p := range ps {
		ch <- prometheus.MustNewConstMetric(peerLag, prometheus.GaugeValue, p.LagSeconds, p.Name)
		ch <- prometheus.MustNewConstMetric(peerDocs, prometheus.GaugeValue, float64(p.Documents), p.Name)
		for _, s := range []string{"ok", "failing", "paused"} {
			v := 0.0
			if s == p.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(peerState, prometheus.GaugeValue, v, p.Name, s)
		}
	}
}
