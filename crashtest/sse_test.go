package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// sseWatch follows tasks over SubscribeToTask streams the way a client
// that must miss nothing does: when a stream breaks it reconnects, to the
// next server, with the last event id it got (Last-Event-ID), until the
// task's stream ends with its terminal state. cut breaks every open
// stream at once (the test does at each failover).
type sseWatch struct {
	bases []string
	hc    *http.Client

	mu   sync.Mutex
	subs map[string]*sseSub // by task id
	cutC chan struct{}      // closed by cut, then replaced
	stop chan struct{}
	wg   sync.WaitGroup
}

// sseSub is one watched task: every event id it got, in order.
type sseSub struct {
	task  string
	mu    sync.Mutex
	ids   []string
	final a2a.TaskState
	conns int           // streams opened
	done  chan struct{} // closed at the terminal state's event
}

func newSSEWatch(bases []string) *sseWatch {
	return &sseWatch{bases: bases, hc: &http.Client{}, subs: map[string]*sseSub{}, cutC: make(chan struct{}), stop: make(chan struct{})}
}

// add subscribes to task as its owner (token) on bases[first] and returns
// once the stream's first event (the task) arrived, false when it did not
// within 10 s. The subscription then runs until the task ends or close.
func (w *sseWatch) add(task, token string, first int) bool {
	s := &sseSub{task: task, done: make(chan struct{})}
	w.mu.Lock()
	w.subs[task] = s
	w.mu.Unlock()
	started := make(chan struct{})
	var once sync.Once
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for i := first; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			if w.follow(s, token, w.bases[i%len(w.bases)], func() { once.Do(func() { close(started) }) }) {
				return
			}
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond): // a client's reconnect delay
			}
		}
	}()
	select {
	case <-started:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// follow opens one stream of s's task on base, resuming after the last
// event s got, and reads it until it ends, the task's terminal state
// arrives (true), or cut.
func (w *sseWatch) follow(s *sseSub, token, base string, onEvent func()) bool {
	w.mu.Lock()
	cutC := w.cutC
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-cutC:
		case <-w.stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/a2a/v1/tasks/"+s.task+":subscribe", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("A2A-Version", "1.0")
	s.mu.Lock()
	if n := len(s.ids); n > 0 {
		req.Header.Set("Last-Event-ID", s.ids[n-1])
	}
	s.conns++
	s.mu.Unlock()
	resp, err := w.hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false // 503 while the database is switching: again
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			var ev a2a.StreamResponse
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev)
			s.mu.Lock()
			s.ids = append(s.ids, id)
			terminal := ev.StatusUpdate != nil && ev.StatusUpdate.Status.State.Terminal()
			if terminal {
				s.final = ev.StatusUpdate.Status.State
			}
			s.mu.Unlock()
			onEvent()
			if terminal {
				close(s.done)
				return true
			}
		}
	}
	return false
}

// cut breaks every open stream; each reconnects with Last-Event-ID.
func (w *sseWatch) cut() {
	w.mu.Lock()
	close(w.cutC)
	w.cutC = make(chan struct{})
	w.mu.Unlock()
}

// close ends every subscription and waits for them.
func (w *sseWatch) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
}

// check waits (until deadline) for every watched task the ledger says
// ended to end on its stream too, with the state the ledger has, and
// returns what went wrong: a missed or repeated event (ids not 1, 2, ...
// k, each once), a wrong state. It also says how many tasks and streams
// it checked.
func (w *sseWatch) check(l *ledger, deadline time.Time) (string, error) {
	w.mu.Lock()
	subs := make([]*sseSub, 0, len(w.subs))
	for _, s := range w.subs {
		subs = append(subs, s)
	}
	w.mu.Unlock()
	checked, streams := 0, 0
	for _, s := range subs {
		l.mu.Lock()
		var want a2a.TaskState
		switch {
		case l.completed[s.task]:
			want = a2a.TaskStateCompleted
		case l.canceled[s.task]:
			want = a2a.TaskStateCanceled
		}
		l.mu.Unlock()
		if want == "" {
			continue // not acknowledged: it may have ended or not
		}
		select {
		case <-s.done:
		case <-time.After(time.Until(deadline)):
			return "", fmt.Errorf("task %s ended (%s) but its stream did not say so; it got %v over %d streams", s.task, want, s.ids, s.conns)
		}
		s.mu.Lock()
		ids, final, conns := append([]string(nil), s.ids...), s.final, s.conns
		s.mu.Unlock()
		if final != want {
			return "", fmt.Errorf("task %s: the stream ended %s, the ledger says %s", s.task, final, want)
		}
		for i, id := range ids {
			if id != s.task+"."+strconv.Itoa(i+1) {
				return "", fmt.Errorf("task %s: events %v over %d streams: event %d is %q (a missed or repeated event)", s.task, ids, conns, i+1, id)
			}
		}
		checked++
		streams += conns
	}
	return fmt.Sprintf("%d streams of %d ended tasks, each event once and in order, over %d connections", checked, checked, streams), nil
}
