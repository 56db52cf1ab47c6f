package main

import (
	"context"
	"iter"
	"log/slog"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// The official a2a-go v2 SDK's own server, as one more ceiling: its
// default request handler with its in-memory task store, behind its
// HTTP+JSON binding, and an executor that answers every send with a
// working task. kfa's durable asks and GetTask are compared with its
// in-memory sends and gets, through the same load generator.

// workingExecutor makes every message a task in the WORKING state: the
// least an agent can do, so what is measured is the SDK itself.
type workingExecutor struct{}

func (workingExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t := a2a.NewSubmittedTask(ec, ec.Message)
		t.Status.State = a2a.TaskStateWorking
		yield(t, nil)
	}
}

func (workingExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// sdkHandler is the SDK server: POST /message:send and GET /tasks/{id},
// among the rest of the binding. Its log is discarded, as kfa's access
// log is read by the bench and thrown away.
func sdkHandler() http.Handler {
	quiet := slog.New(slog.DiscardHandler)
	h := a2asrv.NewHandler(workingExecutor{}, a2asrv.WithLogger(quiet))
	return a2asrv.NewRESTHandler(h)
}

// sdkSendPhase sends the asks' bodies to the SDK server (asking it to
// answer at once, as kfa's asks do) and keeps the task ids for gets.
func (c *ceilingServers) sdkSendPhase(hc *http.Client, workers int, keep func(string)) *phase {
	url := "http://" + c.sdk.addr + "/message:send"
	return &phase{name: "sdk-send", workers: workers, fn: func(ctx context.Context, w *worker, i int) error {
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: url, body: askBody(w.id, i, "", "sdk"), a2a: true}); err != nil {
			return err
		}
		keep(jsonString(w.buf.Bytes(), "id", false))
		return nil
	}}
}

// sdkGetPhase reads random tasks of ids from the SDK server.
func (c *ceilingServers) sdkGetPhase(hc *http.Client, workers int, ids []string) *phase {
	base := "http://" + c.sdk.addr + "/tasks/"
	return &phase{name: "sdk-get", workers: workers, fn: func(ctx context.Context, w *worker, _ int) error {
		return do(ctx, hc, w, call{method: http.MethodGet, url: base + ids[w.rng.IntN(len(ids))], a2a: true})
	}}
}
