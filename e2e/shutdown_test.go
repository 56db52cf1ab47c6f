package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/tasks"
)

// TestShutdownUnderLoad shuts the server down while 64 clients ask and
// reply. Every request either completes and is durable, or fails without a
// trace; reopening the file finds every acknowledged write.
func TestShutdownUnderLoad(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate, c.MaxOpenTasks = 0, 0 })
	const clients = 64
	type acked struct {
		taskID, replyDisc string
		owner             string
	}
	var (
		mu      sync.Mutex
		ackd    []acked
		failed  atomic.Int64
		replies atomic.Int64
	)
	agents := make([]*client.Client, clients)
	ids := make([]string, clients)
	for i := range agents {
		a, c := h.agent(fmt.Sprintf("agent-%d", i))
		// A client of its own per worker, so connections are not shared.
		agents[i] = client.New(h.url, client.WithToken(a.Token), client.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
		ids[i] = a.ID
		_ = c
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var firstAcks sync.WaitGroup
	firstAcks.Add(clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := agents[i]
			other := agents[(i+1)%clients]
			signalled := false
			for n := 0; ; n++ {
				select {
				case <-stop:
					if !signalled {
						firstAcks.Done()
					}
					return
				default:
				}
				res, err := c.SendMessage(context.Background(), askReq(fmt.Sprintf("w%d-%d", i, n), "under load", nil))
				if err != nil {
					failed.Add(1)
					if !signalled {
						firstAcks.Done()
						signalled = true
					}
					return // the server is going away
				}
				a := acked{taskID: res.Task.ID, owner: ids[i]}
				// Every other ask is answered at once by the next agent.
				if n%2 == 0 {
					if _, err := other.Reply(context.Background(), discussionOf(t, *res.Task), "answer"); err == nil {
						a.replyDisc = discussionOf(t, *res.Task)
						replies.Add(1)
					} else {
						failed.Add(1)
					}
				}
				mu.Lock()
				ackd = append(ackd, a)
				mu.Unlock()
				if !signalled {
					firstAcks.Done()
					signalled = true
				}
			}
		}()
	}
	firstAcks.Wait() // every client has done something
	dataDir := h.cfg.DataDir
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	err := h.srv.Shutdown(ctx)
	cancel()
	h.srv = nil
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("shutdown under load: %v", err)
	}

	// Reopen the file as the next start would, and look for every write.
	core, err := server.OpenCore(server.CoreOptions{DataDir: dataDir, Store: h.cfg.Store})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	if core.DB == nil {
		// PostgreSQL: no kfa check yet; the reads below still run.
	} else if rep, err := core.DB.Check(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("kfa check after shutdown under load: %v %+v", err, rep.Violations)
	}
	completed := 0
	for _, a := range ackd {
		tk, err := core.Tasks.Get(context.Background(), a.owner, a.taskID)
		if err != nil {
			t.Fatalf("acknowledged task %s is missing after shutdown: %v", a.taskID, err)
		}
		if a.replyDisc != "" {
			if tk.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("acknowledged reply did not leave task %s completed: %s", a.taskID, tk.State)
			}
			completed++
		}
	}
	// Nothing half-applied: the counters behind totalSize agree with what
	// the indexes hold, for every agent.
	for _, owner := range ids {
		all, err := core.Tasks.List(context.Background(), owner, tasks.ListParams{PageSize: new(100)})
		if err != nil {
			t.Fatal(err)
		}
		n := len(all.Tasks)
		for tok := all.NextPageToken; tok != ""; {
			p, err := core.Tasks.List(context.Background(), owner, tasks.ListParams{PageSize: new(100), PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			n += len(p.Tasks)
			tok = p.NextPageToken
		}
		if n != all.TotalSize {
			t.Fatalf("agent %s: %d tasks in the index, counter says %d", owner, n, all.TotalSize)
		}
	}
	t.Logf("%d acknowledged asks (%d answered) all durable; %d requests failed cleanly during shutdown", len(ackd), completed, failed.Load())
}

// TestRotateDuringRequests rotates an agent's token while it is busy: each
// request with the old token either succeeds (before the rotation) or gets
// 401 (after), never anything else, and everything it made stays its own.
func TestRotateDuringRequests(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate, c.MaxOpenTasks, c.AuthFailRate = 0, 0, 0 })
	a, c := h.agent("alice")
	var (
		wg      sync.WaitGroup
		rotated atomic.Bool
		after   atomic.Int64
		made    sync.Map
	)
	stop := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				wasRotated := rotated.Load()
				res, err := c.SendMessage(context.Background(), askReq(fmt.Sprintf("r%d-%d", w, n), "during rotation", nil))
				var ce *client.Error
				switch {
				case err == nil:
					if wasRotated {
						t.Errorf("the old token worked after the rotation had returned")
					}
					made.Store(res.Task.ID, true)
				case errors.As(err, &ce) && ce.StatusCode == 401:
					after.Add(1)
				default:
					t.Errorf("request during rotation: %v", err)
				}
			}
		}()
	}
	// Let the workers get going, then rotate.
	for {
		n := 0
		made.Range(func(any, any) bool { n++; return n < 20 })
		if n >= 20 {
			break
		}
		runtime.Gosched()
	}
	rot, err := h.admin.RotateAgent(context.Background(), a.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	rotated.Store(true)
	for after.Load() < 20 {
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	// Every task made with the old token belongs to the same agent, which
	// the new token reaches.
	nc := c.WithToken(rot.Token)
	made.Range(func(k, _ any) bool {
		if _, err := nc.GetTask(context.Background(), k.(string), nil); err != nil {
			t.Errorf("task %s made before the rotation: %v", k, err)
		}
		return true
	})
}
