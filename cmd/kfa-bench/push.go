package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kfa-project/kfa/client"
)

// PushBench is how fast push notifications reach a receiver: one reply
// completes 1,000 tasks that each have a config pointing at a receiver
// on loopback, and the receiver notes when each notification arrives.
type PushBench struct {
	Tasks int `json:"tasks"` // tasks completed by each reply
	Reps  int `json:"reps"`
	// Arrival is, for every notification, the time from sending the reply
	// to the receiver getting it.
	Arrival Latency `json:"arrival"`
	// All is, for every repetition, the time from sending the reply to the
	// last of its notifications arriving.
	All Latency `json:"all"`
	// Duplicates counts notifications received more than once.
	Duplicates int `json:"duplicates"`
	// Skipped says why it was not measured, when it was not.
	Skipped string `json:"skipped,omitempty"`
}

// pushReceiver notes the first arrival of each task's notification.
type pushReceiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time
	dups    int
	notify  chan struct{}
}

func (r *pushReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var ev struct {
		StatusUpdate *struct {
			TaskID string `json:"taskId"`
		} `json:"statusUpdate"`
	}
	if json.Unmarshal(b, &ev) != nil || ev.StatusUpdate == nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if _, seen := r.arrived[ev.StatusUpdate.TaskID]; seen {
		r.dups++
	} else {
		r.arrived[ev.StatusUpdate.TaskID] = at
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// pushAskBody is askBody with an inline push config for url.
func pushAskBody(w, i int, disc, tag, url string) []byte {
	b := askBody(w, i, disc, tag)
	return bytes.Replace(b, []byte(`"configuration":{"returnImmediately":true}`),
		[]byte(`"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"`+url+`/hook","token":"bench"}}`), 1)
}

// pushDelivery measures push notifications on a kfa serve of its own
// (started with --push-allow 127.0.0.1), when this kfa has them.
func (b *bench) pushDelivery(ctx context.Context) (PushBench, error) {
	res := PushBench{Tasks: 1000, Reps: 3}
	if b.quick {
		res.Reps = 1
	}
	help, _ := execCommand(ctx, b.kfaBin, "serve", "-h").CombinedOutput()
	if !strings.Contains(string(help), "--push-allow") {
		res.Skipped = "this kfa has no push notifications (kfa serve has no --push-allow)"
		return res, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	recv := &pushReceiver{arrived: map[string]time.Time{}, notify: make(chan struct{}, 1)}
	srv := &http.Server{Handler: recv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	recvURL := "http://" + ln.Addr().String()

	dataDir := filepath.Join(b.dir, "push-data")
	p, err := b.startKFA(ctx, dataDir, "--push-allow", "127.0.0.1")
	if err != nil {
		return res, err
	}
	defer p.stop()
	adm := client.NewUnix(filepath.Join(dataDir, "kfa.sock"))
	agents := make([]agent, 16)
	for i := range agents {
		a, err := adm.CreateAgent(ctx, fmt.Sprintf("push-%02d", i), []string{"read", "post"})
		if err != nil {
			return res, fmt.Errorf("create agent: %w", err)
		}
		agents[i] = agent{id: a.ID, token: a.Token}
	}
	ra, err := adm.CreateAgent(ctx, "push-replier", []string{"read", "post"})
	if err != nil {
		return res, fmt.Errorf("create agent: %w", err)
	}
	replier := agent{id: ra.ID, token: ra.Token}
	hc := httpClient(b.writers + 8)
	sendURL := p.url + "/a2a/v1/message:send"
	w := &worker{rng: rand.New(rand.NewPCG(9, 10))}
	var arrivals, all []time.Duration
	for r := range res.Reps {
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: agents[r%len(agents)].token,
			body: pushAskBody(0, r, "", "push", recvURL), a2a: true}); err != nil {
			return res, err
		}
		disc := jsonString(w.buf.Bytes(), "discussionId", true)
		var mu sync.Mutex
		ids := []string{jsonString(w.buf.Bytes(), "id", false)}
		joins := load(ctx, b.writers, 0, time.Hour, res.Tasks-1, func(ctx context.Context, w *worker, i int) error {
			a := agents[(w.id+i)%len(agents)]
			if err := do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: a.token,
				body: pushAskBody(w.id, i, disc, "pushjoin", recvURL), a2a: true}); err != nil {
				return err
			}
			mu.Lock()
			ids = append(ids, jsonString(w.buf.Bytes(), "id", false))
			mu.Unlock()
			return nil
		})
		if joins.Ops != res.Tasks-1 {
			return res, fmt.Errorf("push: %d of %d joins succeeded: %s", joins.Ops, res.Tasks-1, joins.FirstError)
		}
		t0 := time.Now()
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: p.url + "/api/v1/discussions/" + disc + "/replies",
			token: replier.token, body: replyBody, want: http.StatusCreated}); err != nil {
			return res, err
		}
		last, err := recv.await(ctx, ids, 2*time.Minute)
		if err != nil {
			return res, err
		}
		recv.mu.Lock()
		for _, id := range ids {
			arrivals = append(arrivals, recv.arrived[id].Sub(t0))
		}
		recv.mu.Unlock()
		all = append(all, last.Sub(t0))
	}
	res.Arrival, res.All = summarize(arrivals), summarize(all)
	recv.mu.Lock()
	res.Duplicates = recv.dups
	recv.mu.Unlock()
	return res, nil
}

// await waits until every task in ids has had its notification, and
// returns when the last one arrived.
func (r *pushReceiver) await(ctx context.Context, ids []string, limit time.Duration) (time.Time, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		var last time.Time
		missing := 0
		for _, id := range ids {
			at, ok := r.arrived[id]
			if !ok {
				missing++
			} else if at.After(last) {
				last = at
			}
		}
		r.mu.Unlock()
		if missing == 0 {
			return last, nil
		}
		select {
		case <-r.notify:
		case <-deadline.C:
			return time.Time{}, fmt.Errorf("push: %d of %d notifications had not arrived after %s", missing, len(ids), limit)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}
