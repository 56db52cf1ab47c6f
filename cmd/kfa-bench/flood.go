package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Flood is honest asks with and without a flood of refused writes, from
// the same run in alternating rounds. Every refusal is one a client can
// trigger at will: a cancel of a completed task, a reply on an unknown
// discussion, a join of an answered discussion. The flood is as fast as
// the honest asks the server took in the asks phase (an open loop at that
// rate, on as many workers as the asks), so it doubles the requests; a
// refusal must cost the writes around it nothing (no rollback, no rerun
// of a batch, no place in the write queue).
type Flood struct {
	// Rate is the flood's target rate, requests per second.
	Rate    float64    `json:"rate"`
	Quiet   Throughput `json:"quiet"`   // honest asks alone
	Flooded Throughput `json:"flooded"` // honest asks during the flood
	// Refusals are the flood's requests, each answered with its refusal.
	Refusals Throughput `json:"refusals"`
	// The server's CPU time per honest ask (from the quiet rounds) and per
	// refusal (what the flooded rounds used beyond their honest asks), in
	// microseconds: what a refusal costs the server, whatever the load
	// generator and the machine's other tenants take.
	CPUPerAskUs     float64 `json:"cpuPerAskUs"`
	CPUPerRefusalUs float64 `json:"cpuPerRefusalUs"`
}

// refusalFlood measures honest asks (as the asks phase makes them) alone
// and next to b.writers workers sending refusals.
func (b *bench) refusalFlood(ctx context.Context, hc *http.Client, p *kfaProc, agents []agent, replier agent) (Flood, error) {
	var f Flood
	sendURL := p.url + "/a2a/v1/message:send"
	// Something to refuse: a completed task of agents[0], and its answered
	// discussion.
	w := &worker{}
	if err := do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: agents[0].token, body: askBody(0, 0, "", "flood-done"), a2a: true}); err != nil {
		return f, err
	}
	done, disc := jsonString(w.buf.Bytes(), "id", false), jsonString(w.buf.Bytes(), "discussionId", true)
	if err := do(ctx, hc, w, call{method: http.MethodPost, url: p.url + "/api/v1/discussions/" + disc + "/replies",
		token: replier.token, body: replyBody, want: http.StatusCreated}); err != nil {
		return f, err
	}
	honest := func(ctx context.Context, w *worker, i int) error {
		return do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: agents[w.id%len(agents)].token,
			body: askBody(w.id, i, "", "honest"), a2a: true})
	}
	refusals := []func(*worker, int) call{
		func(*worker, int) call { // a completed task is not cancelable
			return call{method: http.MethodPost, url: p.url + "/a2a/v1/tasks/" + done + ":cancel", token: agents[0].token,
				a2a: true, want: http.StatusBadRequest}
		},
		func(*worker, int) call { // no such discussion
			return call{method: http.MethodPost, url: p.url + "/api/v1/discussions/01JD0000000000000000000000/replies",
				token: replier.token, body: replyBody, want: http.StatusNotFound}
		},
		func(w *worker, i int) call { // the discussion is answered: no one joins it
			return call{method: http.MethodPost, url: sendURL, token: agents[(w.id+1)%len(agents)].token,
				body: askBody(w.id, i, disc, "flood-join"), a2a: true, want: http.StatusBadRequest}
		},
	}
	quiet := &phase{name: "asks-quiet", workers: b.writers, fn: honest, cpu: p.cpuTime}
	pace := newPacer(func() float64 { return quiet.total.throughput(b.writers).PerSec })
	flood := &phase{name: "refusals", workers: b.writers, pace: pace.wait, fn: func(ctx context.Context, w *worker, i int) error {
		return do(ctx, hc, w, refusals[(w.id+i)%len(refusals)](w, i))
	}}
	flooded := &phase{name: "asks-flooded", workers: b.writers, fn: honest, alongside: flood, profile: b.profiler(p, "flood"), cpu: p.cpuTime}
	b.logf("refusal flood: %d rounds of honest asks alone and beside as many refusals a second, on %d workers", b.nRounds, b.writers)
	b.rounds(ctx, quiet, flooded)
	f.Quiet, f.Flooded, f.Refusals = quiet.total.throughput(b.writers), flooded.total.throughput(b.writers), flood.total.throughput(b.writers)
	if f.Quiet.PerSec > 0 && f.Refusals.PerSec > 0 {
		perAsk := quiet.cpuPerSecond() / f.Quiet.PerSec
		f.CPUPerAskUs = perAsk * 1e6
		f.CPUPerRefusalUs = max(0, flooded.cpuPerSecond()-f.Flooded.PerSec*perAsk) / f.Refusals.PerSec * 1e6
	}
	if f.Refusals.Ops == 0 {
		return f, fmt.Errorf("refusal flood: no refusal answered as expected: %s", f.Refusals.FirstError)
	}
	return f, nil
}

// runAlongside runs p.alongside, when set, for the same round as p.
func runAlongside(ctx context.Context, p *phase, warm, round time.Duration) func() {
	if p.alongside == nil {
		return func() {}
	}
	done := make(chan run, 1)
	go func() {
		done <- loadRunPaced(ctx, p.alongside.workers, warm, round, unbounded, p.alongside.pace, p.alongside.fn)
	}()
	return func() { p.alongside.total.add(<-done) }
}

// pacer spaces events 1/rate() apart, shared by many workers. A worker
// that comes late goes at once, but no burst makes up for lost time.
type pacer struct {
	rate func() float64 // events per second, read at each event

	mu   sync.Mutex
	next time.Time
}

func newPacer(rate func() float64) *pacer { return &pacer{rate: rate} }

// wait blocks until the caller's turn.
func (p *pacer) wait(ctx context.Context) {
	interval := time.Duration(float64(time.Second) / max(p.rate(), 1))
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(interval)
	p.mu.Unlock()
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}
