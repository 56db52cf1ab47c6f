package crashtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
)

// pushReceiver records the push notifications kfa sends: per task, the
// jti and state of each request. hold, when set, is consulted before
// answering a request (it may block).
type pushReceiver struct {
	url  string
	mu   sync.Mutex
	got  map[string][]pushSeen // task id -> what arrived for it
	hold func(taskID string)
}

type pushSeen struct {
	jti   string
	state a2a.TaskState
}

func newPushReceiver(t *testing.T) *pushReceiver {
	t.Helper()
	r := &pushReceiver{got: map[string][]pushSeen{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var ev a2a.StreamResponse
		if json.Unmarshal(b, &ev) != nil || ev.StatusUpdate == nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		u := ev.StatusUpdate
		r.mu.Lock()
		r.got[u.TaskID] = append(r.got[u.TaskID], pushSeen{jti: jtiOf(req.Header.Get("KFA-Signature")), state: u.Status.State})
		hold := r.hold
		r.mu.Unlock()
		if hold != nil {
			hold(u.TaskID)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/kfa"
	return r
}

// jtiOf reads the jti claim of a compact JWS without verifying it (the
// e2e tests verify signatures; here only identity matters).
func jtiOf(jws string) string {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		JTI string `json:"jti"`
	}
	_ = json.Unmarshal(b, &c)
	return c.JTI
}

// seen returns what arrived for a task.
func (r *pushReceiver) seen(taskID string) []pushSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pushSeen(nil), r.got[taskID]...)
}

// waitOutboxEmpty waits until the server at base has no pending delivery.
func waitOutboxEmpty(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), "\nkfa_push_queue_depth 0\n") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the push outbox did not drain within 60s")
		}
		time.Sleep(20 * time.Millisecond) // watching another process's progress
	}
}

// verifyPushes waits for the outbox to drain, then checks that every
// acknowledged transition of a task with a config reached the receiver
// with the state it announced. Duplicates (a jti received twice: a
// delivery in flight when kfa was killed) are allowed and counted.
func verifyPushes(t *testing.T, base string, recv *pushReceiver, l *ledger) string {
	t.Helper()
	waitOutboxEmpty(t, base)
	l.mu.Lock()
	defer l.mu.Unlock()
	want := 0
	for id := range l.pushed {
		var state a2a.TaskState
		switch {
		case l.completed[id]:
			state = a2a.TaskStateCompleted
		case l.canceled[id]:
			state = a2a.TaskStateCanceled
		default:
			continue
		}
		want++
		found := false
		for _, s := range recv.seen(id) {
			found = found || s.state == state && s.jti != ""
		}
		if !found {
			t.Fatalf("the acknowledged %s of task %s, which has a push config, was never delivered: %+v", state, id, recv.seen(id))
		}
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	total, dups := 0, 0
	for _, list := range recv.got {
		jtis := map[string]int{}
		for _, s := range list {
			total++
			if jtis[s.jti]++; jtis[s.jti] > 1 {
				dups++
			}
		}
	}
	return fmt.Sprintf("%d acknowledged transitions with a config delivered (%d requests received, %d duplicates)", want, total, dups)
}

// TestPushSurvivesKill: kfa is killed with SIGKILL after a reply's
// transaction committed and while its push notification is in flight;
// after a restart the notification arrives, with the same jti.
func TestPushSurvivesKill(t *testing.T) {
	dir, err := os.MkdirTemp("", "kfa-pushkill-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := buildKFA(t, dir)
	data := filepath.Join(dir, "data")
	p := serve(t, bin, data, "")
	tokens := createAgents(t, bin, data, "pk", 2)

	recv := newPushReceiver(t)
	arrived := make(chan string, 4)
	release := make(chan struct{})
	first := true
	recv.hold = func(taskID string) {
		arrived <- taskID
		if first {
			first = false
			<-release // the first request hangs until kfa is dead
		}
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	ctx := context.Background()
	alice := client.New("http://"+p.addr, client.WithToken(tokens[0]))
	bob := client.New("http://"+p.addr, client.WithToken(tokens[1]))
	yes := true
	res, err := alice.SendMessage(ctx, a2a.SendMessageRequest{
		Message: &a2a.Message{MessageID: "pk-1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(json.RawMessage(`{"action":"ask","question":"Will it survive?"}`))}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes,
			TaskPushNotificationConfig: json.RawMessage(`{"url":"` + recv.url + `"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		DiscussionID string `json:"discussionId"`
	}
	_ = json.Unmarshal(res.Task.Metadata, &meta)
	if r, err := bob.Reply(ctx, meta.DiscussionID, "Yes."); err != nil || len(r.CompletedIDs) != 1 {
		t.Fatalf("reply: %+v %v", r, err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the notification was not sent within 30s")
	}
	p.kill(t) // the reply committed; the delivery is in flight, not recorded
	close(release)
	p = serve(t, bin, data, "")
	defer p.kill(t)
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the notification did not arrive after the restart")
	}
	waitOutboxEmpty(t, "http://"+p.addr)
	seen := recv.seen(res.Task.ID)
	if len(seen) != 2 || seen[0].jti == "" || seen[0].jti != seen[1].jti || seen[1].state != a2a.TaskStateCompleted {
		t.Fatalf("received: %+v", seen)
	}
	mustCheck(t, bin, data, "")
	t.Logf("killed with the notification in flight: it arrived after the restart, with the same jti %s (one duplicate)", seen[0].jti)
}
