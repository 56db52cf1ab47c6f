package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgha"
)

// The failover phase (issue 34): two kfa processes on a multi-host URL
// naming a primary and its synchronous standby, which the bench starts
// itself (internal/pgha), under a steady load of asks; the primary is
// stopped with -m immediate and the standby promoted. It reports the asks
// per second before, during and after, and how soon each process and the
// load recovered.

// FailoverBench is asks per second through one failover.
type FailoverBench struct {
	// Skipped says why the phase did not run ("" when it did).
	Skipped string `json:"skipped,omitempty"`
	Workers int    `json:"workers"`
	// Before is the asks per second in the seconds before the crash,
	// Dip from the crash until every process answered an ask again, After
	// over the rest of the run.
	Before float64 `json:"beforePerSecond"`
	Dip    float64 `json:"dipPerSecond"`
	After  float64 `json:"afterPerSecond"`
	// StopMS is how long pg_ctl stop -m immediate took, PromoteMS pg_ctl
	// promote -w.
	StopMS    float64 `json:"stopMs"`
	PromoteMS float64 `json:"promoteMs"`
	// FirstAskMS is, per process, the time from the start of the
	// promotion to the first ask it acknowledged that was sent after the
	// crash.
	FirstAskMS []float64 `json:"firstAskMs"`
	// RecoveredMS is the time from the start of the promotion to the end
	// of the first quarter second whose asks reach 80% of Before.
	RecoveredMS float64 `json:"recoveredMs"`
	// Unavailable is the 503 answers (the database not answering, or a
	// commit of unknown outcome, retried with the same messageId);
	// Failed any other failure.
	Unavailable int `json:"unavailable"`
	Failed      int `json:"failed"`
	// Timeline is the asks acknowledged in each quarter second, from the
	// start of the load; CrashAt is the quarter second the crash began in.
	Timeline []int `json:"timeline"`
	CrashAt  int   `json:"crashAt"`
}

// Failover phase timing.
const (
	failoverWorkers = 16
	failoverBefore  = 4 * time.Second
	failoverAfter   = 6 * time.Second
	failoverSlot    = 250 * time.Millisecond
)

// measureFailover runs the failover phase on a cluster of its own.
func (b *bench) measureFailover(ctx context.Context) FailoverBench {
	fb := FailoverBench{Workers: failoverWorkers}
	if _, err := pgha.FindBin(); err != nil {
		fb.Skipped = err.Error()
		return fb
	}
	c, err := pgha.New("") // not in b.dir: as root the servers run as postgres, who may not enter it
	if err != nil {
		fb.Skipped = err.Error()
		return fb
	}
	defer c.Close()
	if err := b.failover(ctx, c, &fb); err != nil {
		fb.Skipped = "failed: " + err.Error()
	}
	return fb
}

// failover starts the pair and the processes, runs the load, and fills
// fb.
func (b *bench) failover(ctx context.Context, c *pgha.Cluster, fb *FailoverBench) error {
	primary, standby, err := c.Pair(ctx, "kfa")
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	url := c.MultiURL("kfa", primary, standby)
	var procs []*kfaProc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for i := range 2 {
		p, err := b.startKFA(ctx, filepath.Join(b.dir, fmt.Sprintf("failover-%d", i)), "--store", url)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	adm := client.NewUnix(filepath.Join(procs[0].dataDir, "kfa.sock"))
	var tokens []string
	for i := range failoverWorkers {
		a, err := adm.CreateAgent(ctx, fmt.Sprintf("failover-%02d", i), []string{"read", "post"})
		if err != nil {
			return fmt.Errorf("create agent: %w", err)
		}
		tokens = append(tokens, a.Token)
	}

	l := &failLoad{start: time.Now(), slots: make([]atomic.Int64, int((failoverBefore+failoverAfter+30*time.Second)/failoverSlot))}
	l.first = make([]atomic.Int64, len(procs))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	hc := httpClient(2 * failoverWorkers)
	for w := range failoverWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.work(ctx, hc, w, procs[w%len(procs)].url, w%len(procs), tokens[w], stop)
		}()
	}
	time.Sleep(failoverBefore)
	crash := time.Now()
	l.crash.Store(int64(crash.Sub(l.start)))
	err = primary.Stop(sctx, "immediate")
	promote := time.Now()
	if err == nil {
		err = standby.Promote(sctx)
	}
	promoted := time.Now()
	if err == nil {
		time.Sleep(failoverAfter)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	end := time.Since(l.start)

	fb.StopMS, fb.PromoteMS = ms(promote.Sub(crash)), ms(promoted.Sub(promote))
	fb.Unavailable, fb.Failed = int(l.unavailable.Load()), int(l.failed.Load())
	back := time.Duration(0) // from the start of the load until every process answered
	for i := range l.first {
		f := time.Duration(l.first[i].Load())
		if f == 0 {
			return fmt.Errorf("process %d acknowledged no ask in the %s after the promotion", i+1, failoverAfter)
		}
		fb.FirstAskMS = append(fb.FirstAskMS, ms(f-promote.Sub(l.start)))
		back = max(back, f)
	}
	summarizeFailover(fb, l, crash.Sub(l.start), promote.Sub(l.start), back, end)
	return nil
}

// summarizeFailover fills fb's rates and recovery from l's timeline: the
// crash, the promotion, every process back, and the end of the load, as
// times from the start of the load.
func summarizeFailover(fb *FailoverBench, l *failLoad, crash, promote, back, end time.Duration) {
	n := int(end / failoverSlot)
	fb.CrashAt = int(crash / failoverSlot)
	fb.Timeline = make([]int, n)
	for i := range n {
		fb.Timeline[i] = int(l.slots[i].Load())
	}
	rate := func(from, to time.Duration) float64 {
		a, z := int(from/failoverSlot), int(to/failoverSlot)
		if z <= a {
			return 0
		}
		sum := 0
		for _, k := range fb.Timeline[a:min(z, n)] {
			sum += k
		}
		return float64(sum) / (float64(z-a) * failoverSlot.Seconds())
	}
	warm := time.Second // the first second warms the connections
	fb.Before = rate(warm, crash)
	fb.Dip = rate(crash, back+failoverSlot)
	fb.After = rate(back+failoverSlot, end)
	fb.RecoveredMS = -1
	for i := int(promote / failoverSlot); i < n; i++ {
		if float64(fb.Timeline[i])/failoverSlot.Seconds() >= 0.8*fb.Before {
			fb.RecoveredMS = ms(time.Duration(i+1)*failoverSlot - promote)
			break
		}
	}
}

// failLoad counts the asks acknowledged in each slot.
type failLoad struct {
	start       time.Time
	crash       atomic.Int64 // time.Duration from start; 0 before
	slots       []atomic.Int64
	first       []atomic.Int64 // per process: the first ask sent after the crash and acknowledged (from start)
	unavailable atomic.Int64
	failed      atomic.Int64
}

// work asks through one process until stop, one ask at a time: a 503 is
// tried again with the same body (the same messageId) after a pause, as
// docs/scale-out.md tells a client to.
func (l *failLoad) work(ctx context.Context, hc *http.Client, w int, base string, proc int, token string, stop <-chan struct{}) {
	for i := 0; ; i++ {
		body := askBody(w, i, "", "failover")
		for {
			select {
			case <-stop:
				return
			default:
			}
			sent := time.Since(l.start)
			status, err := postAsk(ctx, hc, base, token, body)
			at := time.Since(l.start)
			if err == nil && status/100 == 2 {
				if k := int(at / failoverSlot); k < len(l.slots) {
					l.slots[k].Add(1)
				}
				if c := time.Duration(l.crash.Load()); c != 0 && sent > c {
					l.first[proc].CompareAndSwap(0, int64(at))
				}
				break
			}
			if status == http.StatusServiceUnavailable {
				l.unavailable.Add(1)
			} else {
				l.failed.Add(1)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// postAsk sends one ask and returns its status.
func postAsk(ctx context.Context, hc *http.Client, base, token string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/a2a/v1/message:send", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// failoverLines says what the phase measured, for the report.
func failoverLines(fb FailoverBench) []string {
	if fb.Skipped != "" {
		return []string{"failover: not measured (" + fb.Skipped + ")"}
	}
	first := ""
	for i, f := range fb.FirstAskMS {
		if i > 0 {
			first += ", "
		}
		first += fmt.Sprintf("process %d %.0f ms", i+1, f)
	}
	rec := "never within the run"
	if fb.RecoveredMS >= 0 {
		rec = fmt.Sprintf("%.0f ms", fb.RecoveredMS)
	}
	return []string{
		fmt.Sprintf("failover (2 processes, synchronous standby, %d clients asking): asks/s %.0f before, %.0f during the switch, %.0f after",
			fb.Workers, fb.Before, fb.Dip, fb.After),
		fmt.Sprintf("  pg_ctl stop -m immediate %.0f ms, pg_ctl promote -w %.0f ms; from the promotion: first ask %s; back to 80%% of the rate %s; %d answers 503 (retried with the same messageId), %d other failures",
			fb.StopMS, fb.PromoteMS, first, rec, fb.Unavailable, fb.Failed),
	}
}
