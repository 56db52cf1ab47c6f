package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
)

// sseEvent is one event of a stream: its id and data.
type sseEvent struct {
	id   string
	data []byte
}

// openEvents starts a streaming request and delivers its events, ids
// included, until the stream ends (the channel closes) or stop is called.
func openEvents(t *testing.T, h *harness, method, path string, headers map[string]string, body string) (<-chan sseEvent, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, h.url+path, rd)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	out := make(chan sseEvent, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = []byte(strings.TrimPrefix(line, "data: "))
			case line == "" && ev.data != nil:
				out <- ev
				ev = sseEvent{}
			}
		}
	}()
	stop := func() { cancel(); resp.Body.Close() }
	t.Cleanup(stop)
	return out, stop
}

func nextEvent(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended early")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20s")
	}
	return sseEvent{}
}

// drain reads a stream to its end.
func drain(t *testing.T, ch <-chan sseEvent) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-time.After(20 * time.Second):
			t.Fatal("the stream did not end within 20s")
		}
	}
}

func ids(evs []sseEvent) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.id)
	}
	return strings.Join(s, " ")
}

// TestStreamResume: every event of a task stream has an id; a client
// that reconnects with Last-Event-ID gets the events after it, none twice
// and none missed, whether the transition happened while it was away or
// after it came back, on HTTP+JSON and JSON-RPC.
func TestStreamResume(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	_, bob := h.agent("bob")
	hdr := func(last string) map[string]string {
		m := a2aHeaders(alice.Token)
		if last != "" {
			m["Last-Event-ID"] = last
		}
		return m
	}

	// The transition happens while the client is away.
	task := h.ask(ac, "m1", "Resume after the answer")
	sub := "/a2a/v1/tasks/" + task.ID + ":subscribe"
	evs, stop := openEvents(t, h, "GET", sub, hdr(""), "")
	first := nextEvent(t, evs)
	if first.id != task.ID+".1" || !strings.Contains(string(first.data), `"task"`) {
		t.Fatalf("first event: %s %s", first.id, first.data)
	}
	stop()
	if _, err := bob.Reply(bg(), discussionOf(t, task), "answered while away"); err != nil {
		t.Fatal(err)
	}
	evs, _ = openEvents(t, h, "GET", sub, hdr(first.id), "")
	rest := drain(t, evs)
	if got := ids(rest); got != task.ID+".2 "+task.ID+".3" {
		t.Fatalf("after %s: %s", first.id, got)
	}
	var art, st a2a.StreamResponse
	if err := json.Unmarshal(rest[0].data, &art); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rest[1].data, &st); err != nil {
		t.Fatal(err)
	}
	if art.ArtifactUpdate == nil || st.StatusUpdate == nil || st.StatusUpdate.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resumed events: %s / %s", rest[0].data, rest[1].data)
	}
	evs, _ = openEvents(t, h, "GET", sub, hdr(task.ID+".2"), "")
	if got := ids(drain(t, evs)); got != task.ID+".3" {
		t.Fatalf("after .2: %s", got)
	}
	evs, _ = openEvents(t, h, "GET", sub, hdr(task.ID+".3"), "")
	if got := drain(t, evs); len(got) != 0 {
		t.Fatalf("after the last event: %s", ids(got))
	}
	// Without Last-Event-ID a terminal task still cannot be subscribed to.
	if resp, body := h.raw("GET", sub, hdr(""), ""); resp.StatusCode != 400 || reason(body) != "UNSUPPORTED_OPERATION" {
		t.Fatalf("subscribe to a completed task: %d %s", resp.StatusCode, body)
	}

	// The client comes back before the transition: no snapshot again,
	// then the transition's events. Over JSON-RPC the ids are the same.
	task = h.ask(ac, "m2", "Resume before the answer")
	rpc := `{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":"` + task.ID + `"}}`
	evs, _ = openEvents(t, h, "POST", "/a2a/jsonrpc", hdr(task.ID+".1"), rpc)
	<-h.srv.StreamOn(task.ID)
	if _, err := bob.Reply(bg(), discussionOf(t, task), "answered after the return"); err != nil {
		t.Fatal(err)
	}
	rest = drain(t, evs)
	if got := ids(rest); got != task.ID+".2 "+task.ID+".3" {
		t.Fatalf("JSON-RPC after .1: %s", got)
	}
	if !strings.Contains(string(rest[1].data), `"id":7`) || !strings.Contains(string(rest[1].data), `"statusUpdate"`) {
		t.Fatalf("JSON-RPC event: %s", rest[1].data)
	}

	// message:stream again with the same messageId is the same task: with
	// its last id the client gets nothing twice; without, the whole task.
	body := mustJSON(askReq("m3", "Streamed", nil))
	evs, stop = openEvents(t, h, "POST", "/a2a/v1/message:stream", hdr(""), body)
	first = nextEvent(t, evs)
	stop()
	tid := strings.TrimSuffix(first.id, ".1")
	if _, err := ac.CancelTask(bg(), tid); err != nil {
		t.Fatal(err)
	}
	evs, _ = openEvents(t, h, "POST", "/a2a/v1/message:stream", hdr(first.id), body)
	if got := ids(drain(t, evs)); got != tid+".2" {
		t.Fatalf("message:stream after .1 of a canceled task: %s", got)
	}
	evs, _ = openEvents(t, h, "POST", "/a2a/v1/message:stream", hdr(""), body)
	whole := drain(t, evs)
	if len(whole) != 1 || whole[0].id != tid+".2" || !strings.Contains(string(whole[0].data), `"TASK_STATE_CANCELED"`) {
		t.Fatalf("message:stream of a canceled task: %s %s", ids(whole), whole)
	}
	// A search answer has an id too.
	evs, _ = openEvents(t, h, "POST", "/a2a/v1/message:stream", a2aHeaders(""), mustJSON(textReq("s1", "bbolt")))
	if got := drain(t, evs); len(got) != 1 || got[0].id == "" {
		t.Fatalf("search over a stream: %+v", got)
	}
}
