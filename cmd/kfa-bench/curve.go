package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
)

// curveClients are the concurrencies of the cost curves (--curve).
var curveClients = []int{1, 4, 16, 64, 256}

// CurvePoint is asks and GetTask at one number of concurrent clients.
type CurvePoint struct {
	Clients int        `json:"clients"`
	Asks    Throughput `json:"asks"`
	GetTask Throughput `json:"getTask"`
}

// costCurve runs asks, then GetTask over tasks, at each of curveClients
// concurrent closed-loop clients (each on its own connection) for two
// rounds' time after a warm-up, so the knee is visible: where more
// clients stop adding throughput and only add latency.
func (b *bench) costCurve(ctx context.Context, p *kfaProc, agents []agent, tasks []asked) []CurvePoint {
	hc := httpClient(curveClients[len(curveClients)-1] + 8)
	defer hc.CloseIdleConnections()
	sendURL := p.url + "/a2a/v1/message:send"
	var out []CurvePoint
	for _, n := range curveClients {
		b.logf("curve: asks and GetTask at %d clients", n)
		pt := CurvePoint{Clients: n}
		pt.Asks = load(ctx, n, b.warm, 2*b.round, unbounded, func(ctx context.Context, w *worker, i int) error {
			return do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: agents[w.id%len(agents)].token,
				body: askBody(w.id, i, "", "curve"), a2a: true})
		})
		pt.GetTask = load(ctx, n, b.warm, 2*b.round, unbounded, func(ctx context.Context, w *worker, _ int) error {
			t := tasks[w.rng.IntN(len(tasks))]
			return do(ctx, hc, w, call{method: http.MethodGet, url: p.url + "/a2a/v1/tasks/" + t.task, token: agents[t.owner].token, a2a: true})
		})
		out = append(out, pt)
	}
	return out
}

// printCurve writes the cost curves' table.
func printCurve(out io.Writer, pts []CurvePoint) {
	if len(pts) == 0 {
		return
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	row("COST CURVES (--curve), closed-loop clients", "asks/s", "ask p50 ms", "ask p99 ms", "GetTask/s", "GetTask p50 ms", "GetTask p99 ms", "errors")
	for _, pt := range pts {
		row(fmt.Sprint(pt.Clients), f1(pt.Asks.PerSec), f1(pt.Asks.P50Ms), f1(pt.Asks.P99Ms),
			f1(pt.GetTask.PerSec), f1(pt.GetTask.P50Ms), f1(pt.GetTask.P99Ms), fmt.Sprint(pt.Asks.Errors+pt.GetTask.Errors))
	}
	_ = tw.Flush()
	for _, pt := range pts {
		for _, t := range []Throughput{pt.Asks, pt.GetTask} {
			if t.FirstError != "" {
				fmt.Fprintf(out, "first error at %d clients: %s\n", pt.Clients, t.FirstError)
			}
		}
	}
}
