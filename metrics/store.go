package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kfa-project/kfa/a2a"
)

// Counts are the store's totals a scrape reports. Each store fills them
// from its own counters (the process wires the store to the metrics), so
// the metrics never import a store.
type Counts struct {
	Tasks        int                   // every task
	TasksByState map[a2a.TaskState]int // states with at least one task
	Discussions  int
	Open         int // discussions waiting for a qualifying reply
	Answered     int
	Agents       int // including revoked agents
}

// BoltStats are the numbers of a bbolt file a scrape reports: its
// transactions, its freelist and the work of its write transactions,
// cumulative since the file was opened.
type BoltStats struct {
	ReadTx        int // read transactions started
	OpenReadTx    int // read transactions open now
	FreePages     int
	PendingPages  int
	FreeBytes     int // bytes in free and pending pages
	FreelistBytes int // bytes the freelist itself takes

	PageAllocs    int64 // pages allocated by write transactions
	PageAllocSize int64 // bytes allocated
	Cursors       int64
	Nodes         int64
	NodeDerefs    int64
	Rebalances    int64
	RebalanceTime time.Duration
	Splits        int64
	Spills        int64
	SpillTime     time.Duration
	Writes        int64 // page writes to the file
	WriteTime     time.Duration
}

// Source is what the store collector reads at each scrape, on a bbolt
// file.
type Source interface {
	Counts() (Counts, error)
	BoltStats() BoltStats
	FileSize() (int64, error)
}

// CountSource is the part of Source a store without a bbolt file (the
// PostgreSQL store) has.
type CountSource interface {
	Counts() (Counts, error)
}

// WatchCounts registers the collectors of WatchStore that read the
// store's counters only: tasks by state, discussions by status, agents.
// Call it once, instead of WatchStore.
func (m *Metrics) WatchCounts(src CountSource) {
	c := newStoreCollector(nil)
	c.counts = src
	m.reg.MustRegister(c)
}

// WatchStore registers collectors that read src at every scrape: tasks by
// state, discussions by status, agents, the file size and bbolt's
// transaction and freelist statistics. Call it once.
func (m *Metrics) WatchStore(src Source) {
	m.reg.MustRegister(newStoreCollector(src))
}

type storeCollector struct {
	src    Source // nil without a bbolt file
	counts CountSource

	tasks, discussions, agents, size *prometheus.Desc
	gauges                           []boltMetric
	counters                         []boltMetric
}

// boltMetric is one number of BoltStats.
type boltMetric struct {
	desc *prometheus.Desc
	get  func(*BoltStats) float64
}

func newStoreCollector(src Source) *storeCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	b := func(name, help string, get func(*BoltStats) float64) boltMetric {
		return boltMetric{desc: d(name, help), get: get}
	}
	return &storeCollector{
		src:         src,
		counts:      src,
		tasks:       d("kfa_tasks", "Tasks by state, from the store's counters.", "state"),
		discussions: d("kfa_discussions", "Discussions by status: open (waiting for a qualifying reply) or answered.", "status"),
		agents:      d("kfa_agents", "Agents, revoked ones included."),
		size:        d("kfa_db_size_bytes", "Size of the bbolt database."),
		gauges: []boltMetric{
			b("kfa_bbolt_open_read_tx", "Read transactions open now.", func(s *BoltStats) float64 { return float64(s.OpenReadTx) }),
			b("kfa_bbolt_free_pages", "Free pages ready for reuse.", func(s *BoltStats) float64 { return float64(s.FreePages) }),
			b("kfa_bbolt_pending_pages", "Pages freed by write transactions that open readers may still see.", func(s *BoltStats) float64 { return float64(s.PendingPages) }),
			b("kfa_bbolt_free_bytes", "Bytes in free and pending pages.", func(s *BoltStats) float64 { return float64(s.FreeBytes) }),
			b("kfa_bbolt_freelist_bytes", "Bytes the freelist takes.", func(s *BoltStats) float64 { return float64(s.FreelistBytes) }),
		},
		counters: []boltMetric{
			b("kfa_bbolt_read_tx_total", "Read transactions started.", func(s *BoltStats) float64 { return float64(s.ReadTx) }),
			b("kfa_bbolt_page_allocs_total", "Pages allocated by write transactions.", func(s *BoltStats) float64 { return float64(s.PageAllocs) }),
			b("kfa_bbolt_page_alloc_bytes_total", "Bytes allocated by write transactions.", func(s *BoltStats) float64 { return float64(s.PageAllocSize) }),
			b("kfa_bbolt_cursors_total", "Cursors created.", func(s *BoltStats) float64 { return float64(s.Cursors) }),
			b("kfa_bbolt_nodes_total", "B+tree nodes allocated.", func(s *BoltStats) float64 { return float64(s.Nodes) }),
			b("kfa_bbolt_node_derefs_total", "B+tree node dereferences.", func(s *BoltStats) float64 { return float64(s.NodeDerefs) }),
			b("kfa_bbolt_rebalances_total", "Node rebalances.", func(s *BoltStats) float64 { return float64(s.Rebalances) }),
			b("kfa_bbolt_rebalance_seconds_total", "Time spent rebalancing.", func(s *BoltStats) float64 { return s.RebalanceTime.Seconds() }),
			b("kfa_bbolt_splits_total", "Nodes split.", func(s *BoltStats) float64 { return float64(s.Splits) }),
			b("kfa_bbolt_spills_total", "Nodes spilled.", func(s *BoltStats) float64 { return float64(s.Spills) }),
			b("kfa_bbolt_spill_seconds_total", "Time spent spilling.", func(s *BoltStats) float64 { return s.SpillTime.Seconds() }),
			b("kfa_bbolt_writes_total", "Page writes to the file.", func(s *BoltStats) float64 { return float64(s.Writes) }),
			b("kfa_bbolt_write_seconds_total", "Time spent writing pages.", func(s *BoltStats) float64 { return s.WriteTime.Seconds() }),
		},
	}
}

// Describe implements prometheus.Collector.
func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.tasks
	ch <- c.discussions
	ch <- c.agents
	if c.src == nil {
		return
	}
	ch <- c.size
	for _, g := range c.gauges {
		ch <- g.desc
	}
	for _, g := range c.counters {
		ch <- g.desc
	}
}

// askStates are reported even at zero, so dashboards see every series.
var askStates = []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateCanceled}

// Collect implements prometheus.Collector.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	counts, err := c.counts.Counts()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.tasks, err)
	} else {
		for _, st := range askStates {
			if _, ok := counts.TasksByState[st]; !ok {
				ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, 0, string(st))
			}
		}
		for st, n := range counts.TasksByState {
			ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(n), string(st))
		}
		ch <- prometheus.MustNewConstMetric(c.discussions, prometheus.GaugeValue, float64(counts.Open), "open")
		ch <- prometheus.MustNewConstMetric(c.discussions, prometheus.GaugeValue, float64(counts.Answered), "answered")
		ch <- prometheus.MustNewConstMetric(c.agents, prometheus.GaugeValue, float64(counts.Agents))
	}
	if c.src == nil {
		return
	}
	if n, err := c.src.FileSize(); err != nil {
		ch <- prometheus.NewInvalidMetric(c.size, err)
	} else {
		ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(n))
	}
	bs := c.src.BoltStats()
	for _, g := range c.gauges {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.get(&bs))
	}
	for _, g := range c.counters {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.CounterValue, g.get(&bs))
	}
}
