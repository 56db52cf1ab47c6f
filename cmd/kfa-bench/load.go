package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The load generator: a fixed number of workers, each with its own
// connection, running one operation in a closed loop until a deadline or
// an operation budget, whichever comes first. Every operation's latency is
// kept, so percentiles are exact.

// worker is one closed-loop client.
type worker struct {
	id  int
	buf bytes.Buffer // the last response body
	rng *rand.Rand
}

// op runs one operation on worker w; i counts the worker's operations.
type op func(ctx context.Context, w *worker, i int) error

// Throughput is the result of one closed-loop phase.
type Throughput struct {
	Workers int     `json:"workers"`
	Ops     int     `json:"ops"`
	Errors  int     `json:"errors"`
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"perSec"`
	Latency
	FirstError string `json:"firstError,omitempty"`
}

// Latency summarises a set of durations, in milliseconds.
type Latency struct {
	N     int     `json:"n"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
}

func summarize(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	q := func(p float64) float64 {
		i := int(p*float64(len(d))+0.5) - 1
		i = max(0, min(len(d)-1, i))
		return ms(d[i])
	}
	return Latency{N: len(d), P50Ms: q(0.50), P99Ms: q(0.99), MaxMs: ms(d[len(d)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// run is the raw outcome of closed-loop operations: what rounds add up.
type run struct {
	ops, errs int
	elapsed   time.Duration
	lat       []time.Duration
	first     error
}

func (r *run) add(o run) {
	r.ops += o.ops
	r.errs += o.errs
	r.elapsed += o.elapsed
	r.lat = append(r.lat, o.lat...)
	if r.first == nil {
		r.first = o.first
	}
}

func (r run) throughput(workers int) Throughput {
	el := r.elapsed
	if el <= 0 {
		el = time.Nanosecond
	}
	t := Throughput{
		Workers: workers, Ops: r.ops, Errors: r.errs, Seconds: el.Seconds(),
		PerSec: float64(r.ops) / el.Seconds(), Latency: summarize(r.lat),
	}
	if r.first != nil {
		t.FirstError = r.first.Error()
	}
	return t
}

// unbounded, as maxOps, leaves the duration as the only bound of a load.
// It is not 0: a load of no operations (a top-up that finds nothing
// missing) must not turn into an endless one.
const unbounded = math.MaxInt

// load runs fn on workers workers for dur (after warm, whose operations are
// not counted) or until maxOps operations, whichever ends first.
func load(ctx context.Context, workers int, warm, dur time.Duration, maxOps int, fn op) Throughput {
	return loadRun(ctx, workers, warm, dur, maxOps, fn).throughput(workers)
}

func loadRun(ctx context.Context, workers int, warm, dur time.Duration, maxOps int, fn op) run {
	return loadRunPaced(ctx, workers, warm, dur, maxOps, nil, fn)
}

// loadRunPaced is loadRun with pace, when not nil, called before each
// operation and not counted in its latency.
func loadRunPaced(ctx context.Context, workers int, warm, dur time.Duration, maxOps int, pace func(context.Context), fn op) run {
	var (
		issued  atomic.Int64
		errs    atomic.Int64
		firstMu sync.Mutex
		first   error
		wg      sync.WaitGroup
		lat     = make([][]time.Duration, workers)
	)
	start := time.Now()
	measureFrom := start.Add(warm)
	deadline := measureFrom.Add(dur)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := &worker{id: w, rng: rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))}
			for i := 0; ; i++ {
				if pace != nil {
					pace(ctx)
				}
				t0 := time.Now()
				if t0.After(deadline) || ctx.Err() != nil {
					return
				}
				counted := !t0.Before(measureFrom)
				if counted && issued.Add(1) > int64(maxOps) {
					return
				}
				err := fn(ctx, wk, i)
				d := time.Since(t0)
				if !counted {
					continue
				}
				if err != nil {
					errs.Add(1)
					firstMu.Lock()
					if first == nil {
						first = err
					}
					firstMu.Unlock()
					continue
				}
				lat[w] = append(lat[w], d)
			}
		}()
	}
	wg.Wait()
	r := run{errs: int(errs.Load()), elapsed: time.Since(measureFrom), first: first}
	for _, l := range lat {
		r.lat = append(r.lat, l...)
	}
	r.ops = len(r.lat)
	return r
}

// phase is one closed-loop measurement that takes part in interleaved
// rounds.
type phase struct {
	name    string
	workers int
	fn      op
	total   run
	// profile, when set, records a CPU profile of the server during the
	// phase's first round.
	profile func(d time.Duration)
	// alongside, when set, runs during each of this phase's rounds, on its
	// own workers, and adds up its own totals.
	alongside *phase
	// pace, when set, is waited for before each operation (an open loop);
	// the wait is not part of the operation's latency.
	pace func(context.Context)
	// cpu, when set, reads the server's CPU time; cpuUsed and cpuWall add
	// up what it used during the phase's rounds, and over how long.
	cpu              func() time.Duration
	cpuUsed, cpuWall time.Duration
}

// cpuPerSecond is the server's CPU seconds per second during the phase.
func (p *phase) cpuPerSecond() float64 {
	if p.cpuWall <= 0 {
		return 0
	}
	return p.cpuUsed.Seconds() / p.cpuWall.Seconds()
}

// rounds alternates the phases, round after round, each for the round
// time after a short warm-up, and adds up each phase's rounds. On a shared
// machine whose speed drifts, a ceiling and the kfa number compared with
// it then see the same drift.
func (b *bench) rounds(ctx context.Context, phases ...*phase) {
	b.roundsOf(ctx, b.round, phases...)
}

// roundsOf is rounds with rounds of the given length.
func (b *bench) roundsOf(ctx context.Context, round time.Duration, phases ...*phase) {
	for r := range b.nRounds {
		for _, p := range phases {
			var c0 time.Duration
			t0 := time.Now()
			if p.cpu != nil {
				c0 = p.cpu()
			}
			wait := runAlongside(ctx, p, b.warm, round)
			if r == 0 && p.profile != nil {
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(b.warm)
					p.profile(round)
				}()
				p.total.add(loadRun(ctx, p.workers, b.warm, round, unbounded, p.fn))
				wg.Wait()
				wait()
			} else {
				p.total.add(loadRun(ctx, p.workers, b.warm, round, unbounded, p.fn))
				wait()
			}
			if p.cpu != nil {
				p.cpuUsed += p.cpu() - c0
				p.cpuWall += time.Since(t0)
			}
		}
	}
}

// httpClient is the generator's HTTP client: keep-alive connections to one
// host, as many as there are workers, no compression.
func httpClient(conns int) *http.Client {
	tr := &http.Transport{
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// call is one request of the generator.
type call struct {
	method string
	url    string
	token  string
	body   []byte
	a2a    bool // send A2A-Version: 1.0
	want   int  // expected status; 0 means any 2xx
}

// do sends c and reads the whole answer into w.buf.
func do(ctx context.Context, hc *http.Client, w *worker, c call) error {
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return err
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.a2a {
		req.Header.Set("A2A-Version", "1.0")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	w.buf.Reset()
	if _, err := w.buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if c.want != 0 {
		ok = resp.StatusCode == c.want
	}
	if !ok {
		return &statusError{method: c.method, url: c.url, status: resp.StatusCode, body: truncate(w.buf.String(), 300)}
	}
	return nil
}

type statusError struct {
	method, url string
	status      int
	body        string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.method, e.url, e.status, e.body)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// jsonString finds the string value of the first (or, with last, the last)
// "key":"..." in b without decoding the document: the generator must not
// spend the CPU it shares with the server on parsing answers.
func jsonString(b []byte, key string, last bool) string {
	pat := []byte(`"` + key + `":"`)
	var i int
	if last {
		i = bytes.LastIndex(b, pat)
	} else {
		i = bytes.Index(b, pat)
	}
	if i < 0 {
		return ""
	}
	rest := b[i+len(pat):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
