package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// The one-at-a-time latencies of the load phases' server: a reply that
// completes one waiting task (and when a GetTask and a stream see it),
// and one that completes 1,000.

// commitLatency asks, opens a stream on the task, replies as someone else,
// and times the reply, a GetTask showing the completion and the stream's
// completion event.
func (b *bench) commitLatency(ctx context.Context, hc *http.Client, p *kfaProc, asker, replier agent, res *KFA) error {
	w := &worker{rng: rand.New(rand.NewPCG(5, 6))}
	streams := &http.Client{Transport: hc.Transport} // no timeout: a stream stays open
	var reply, readable, sse []time.Duration
	for i := range b.iterations {
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: p.url + "/a2a/v1/message:send", token: asker.token,
			body: askBody(0, i, "", "lat"), a2a: true}); err != nil {
			return err
		}
		task, disc := jsonString(w.buf.Bytes(), "id", false), jsonString(w.buf.Bytes(), "discussionId", true)

		sctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, p.url+"/a2a/v1/tasks/"+task+":subscribe", nil)
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+asker.token)
		resp, err := streams.Do(req)
		if err != nil {
			cancel()
			return fmt.Errorf("subscribe: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			cancel()
			return fmt.Errorf("subscribe: HTTP %d", resp.StatusCode)
		}
		rd := bufio.NewReader(resp.Body)
		// The first event is the task as it is now: from then on the
		// server has the subscription.
		if err := readEvent(rd, nil); err != nil {
			resp.Body.Close()
			cancel()
			return fmt.Errorf("subscribe: first event: %w", err)
		}
		evAt := make(chan time.Time, 1)
		go func() {
			var at time.Time
			_ = readEvent(rd, func(line []byte) bool {
				if bytes.Contains(line, []byte(`"statusUpdate"`)) {
					at = time.Now()
					return true
				}
				return false
			})
			evAt <- at
		}()

		t0 := time.Now()
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: p.url + "/api/v1/discussions/" + disc + "/replies",
			token: replier.token, body: replyBody, want: http.StatusCreated}); err != nil {
			resp.Body.Close()
			cancel()
			return err
		}
		t1 := time.Now()
		for {
			if err := do(ctx, hc, w, call{method: http.MethodGet, url: p.url + "/a2a/v1/tasks/" + task, token: asker.token, a2a: true}); err != nil {
				resp.Body.Close()
				cancel()
				return err
			}
			if bytes.Contains(w.buf.Bytes(), []byte(`"TASK_STATE_COMPLETED"`)) {
				break
			}
		}
		t2 := time.Now()
		var te time.Time
		select {
		case te = <-evAt:
		case <-time.After(10 * time.Second):
		}
		cancel()
		resp.Body.Close()
		if te.IsZero() {
			return fmt.Errorf("no completion event on the stream of task %s", task)
		}
		reply = append(reply, t1.Sub(t0))
		readable = append(readable, t2.Sub(t1))
		sse = append(sse, te.Sub(t1))
		if te.Before(t1) {
			res.SSEBeforeAnswer++
		}
	}
	res.Reply1, res.Readable, res.SSE = summarize(reply), summarize(readable), summarize(sse)
	return nil
}

// readEvent reads SSE lines until one data line (with match nil), or until
// match accepts a data line.
func readEvent(rd *bufio.Reader, match func([]byte) bool) error {
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue
		}
		if match == nil || match(line) {
			return nil
		}
	}
}

// fanout makes 1,000 tasks wait on one discussion (one ask and 999 joins,
// from many agents), then times the one reply that completes them all.
func (b *bench) fanout(ctx context.Context, hc *http.Client, p *kfaProc, agents []agent, replier agent, res *KFA) error {
	const n = 1000
	sendURL := p.url + "/a2a/v1/message:send"
	var lat []time.Duration
	w := &worker{rng: rand.New(rand.NewPCG(7, 8))}
	for r := range b.fanoutReps {
		author := agents[r%len(agents)]
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: author.token, body: askBody(0, r, "", "fan"), a2a: true}); err != nil {
			return err
		}
		disc := jsonString(w.buf.Bytes(), "discussionId", true)
		joins := load(ctx, b.writers, 0, time.Hour, n-1, func(ctx context.Context, w *worker, i int) error {
			a := agents[(w.id+i)%len(agents)]
			return do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: a.token, body: askBody(w.id, i, disc, "join"), a2a: true})
		})
		if joins.Ops != n-1 {
			return fmt.Errorf("fan-out: %d of %d joins succeeded: %s", joins.Ops, n-1, joins.FirstError)
		}
		t0 := time.Now()
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: p.url + "/api/v1/discussions/" + disc + "/replies",
			token: replier.token, body: replyBody, want: http.StatusCreated}); err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
		if !bytes.Contains(w.buf.Bytes(), []byte(`"completedTasks":1000`)) {
			return fmt.Errorf("fan-out reply did not complete 1000 tasks: %s", truncate(w.buf.String(), 200))
		}
	}
	res.Reply1000 = summarize(lat)
	return nil
}
