package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/prototest"
	"github.com/kfa-project/kfa/server"
)

// sseStream is an open Server-Sent Events response.
type sseStream struct {
	resp     *http.Response
	events   chan []byte // data of each event
	comments chan string
	cancel   context.CancelFunc
}

// openSSE starts a streaming request and reads its events in the
// background. It fails the test unless the answer is a 200 event stream.
func openSSE(t *testing.T, client *http.Client, method, url string, headers map[string]string, body string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, url, rd)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("stream %s %s: %d %s %s", method, url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &sseStream{resp: resp, events: make(chan []byte, 16), comments: make(chan string, 64), cancel: cancel}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data: "):
				s.events <- []byte(strings.TrimPrefix(line, "data: "))
			case strings.HasPrefix(line, ":"):
				select {
				case s.comments <- line:
				default:
				}
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// next returns the next event, or fails after a generous wait.
func (s *sseStream) next(t *testing.T) []byte {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended early")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20s")
	}
	return nil
}

// ended waits for the server to close the stream.
func (s *sseStream) ended(t *testing.T) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			t.Fatalf("expected the end of the stream, got %s", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream did not end within 20s")
	}
}

func decodeEvent(t *testing.T, raw []byte) a2a.StreamResponse {
	t.Helper()
	prototest.Valid(t, prototest.StreamResponse, raw)
	var ev a2a.StreamResponse
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestSubscribeSeesCompletion(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	_, bc := h.agent("bob")
	tk := h.ask(ac, "a1", "Will a subscriber hear the answer?")
	headers := a2aHeaders(alice.Token)
	get := openSSE(t, http.DefaultClient, "GET", h.url+"/a2a/v1/tasks/"+tk.ID+":subscribe", headers, "")
	post := openSSE(t, http.DefaultClient, "POST", h.url+"/a2a/v1/tasks/"+tk.ID+":subscribe", headers, "")
	for _, s := range []*sseStream{get, post} {
		first := decodeEvent(t, s.next(t))
		if first.Task == nil || first.Task.ID != tk.ID || first.Task.Status.State != a2a.TaskStateWorking {
			t.Fatalf("first event: %+v", first)
		}
	}
	rep, err := bc.Reply(bg(), discussionOf(t, tk), "Yes, at once.")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*sseStream{get, post} {
		art := decodeEvent(t, s.next(t))
		if art.ArtifactUpdate == nil || art.ArtifactUpdate.TaskID != tk.ID || *art.ArtifactUpdate.Artifact.Parts[0].Text != "Yes, at once." ||
			!art.ArtifactUpdate.LastChunk {
			t.Fatalf("artifact event: %+v", art)
		}
		st := decodeEvent(t, s.next(t))
		if st.StatusUpdate == nil || st.StatusUpdate.Status.State != a2a.TaskStateCompleted ||
			st.StatusUpdate.Status.Timestamp != rep.Reply.CreatedAt || st.StatusUpdate.ContextID != tk.ContextID {
			t.Fatalf("status event: %+v", st)
		}
		s.ended(t)
	}
	// A terminal task has nothing to stream.
	resp, body := h.raw("GET", "/a2a/v1/tasks/"+tk.ID+":subscribe", headers, "")
	if resp.StatusCode != 400 || reason(body) != "UNSUPPORTED_OPERATION" {
		t.Fatalf("subscribe to a completed task: %d %s", resp.StatusCode, body)
	}
	// Another agent's task: not found, as everywhere.
	resp, body = h.raw("GET", "/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(tokenOf(bc)), "")
	if resp.StatusCode != 404 || reason(body) != "TASK_NOT_FOUND" {
		t.Fatalf("subscribe to a foreign task: %d %s", resp.StatusCode, body)
	}
}

func TestSubscribeSeesCancel(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	tk := h.ask(ac, "a1", "to be canceled")
	s := openSSE(t, http.DefaultClient, "GET", h.url+"/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(alice.Token), "")
	decodeEvent(t, s.next(t))
	c, err := ac.CancelTask(bg(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	ev := decodeEvent(t, s.next(t))
	if ev.StatusUpdate == nil || ev.StatusUpdate.Status.State != a2a.TaskStateCanceled || ev.StatusUpdate.Status.Timestamp != c.Status.Timestamp {
		t.Fatalf("cancel event: %+v", ev)
	}
	s.ended(t)
}

func TestStreamAskAndSearch(t *testing.T) {
	h := start(t, nil)
	alice, _ := h.agent("alice")
	_, bc := h.agent("bob")
	// An ask over a stream needs no returnImmediately: the stream holds.
	body := `{"message":{"role":"ROLE_USER","messageId":"st-1","parts":[{"data":{"action":"ask","question":"streamed ask?"}}]}}`
	s := openSSE(t, http.DefaultClient, "POST", h.url+"/a2a/v1/message:stream", a2aHeaders(alice.Token), body)
	first := decodeEvent(t, s.next(t))
	if first.Task == nil || first.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event: %+v", first)
	}
	if _, err := bc.Reply(bg(), discussionOf(t, *first.Task), "answer"); err != nil {
		t.Fatal(err)
	}
	decodeEvent(t, s.next(t)) // artifact
	if ev := decodeEvent(t, s.next(t)); ev.StatusUpdate == nil || ev.StatusUpdate.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("final event: %+v", ev)
	}
	s.ended(t)
	// The same message id again over a stream: the same, now completed,
	// task, and the stream ends at once.
	again := openSSE(t, http.DefaultClient, "POST", h.url+"/a2a/v1/message:stream", a2aHeaders(alice.Token), body)
	if ev := decodeEvent(t, again.next(t)); ev.Task == nil || ev.Task.ID != first.Task.ID || ev.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("retried stream: %+v", ev)
	}
	again.ended(t)
	// Errors before a stream starts are ordinary HTTP errors.
	resp, raw := h.raw("POST", "/a2a/v1/message:stream", a2aHeaders(""), body)
	if resp.StatusCode != 401 || reason(raw) != "UNAUTHENTICATED" {
		t.Fatalf("anonymous streamed ask: %d %s", resp.StatusCode, raw)
	}
}

func TestJSONRPCStreams(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	_, bc := h.agent("bob")
	tk := h.ask(ac, "a1", "JSON-RPC subscriber?")
	rpcHeaders := map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer " + alice.Token}
	v1 := openSSE(t, http.DefaultClient, "POST", h.url+"/a2a/jsonrpc", rpcHeaders,
		`{"jsonrpc":"2.0","id":"sub-1","method":"SubscribeToTask","params":{"id":"`+tk.ID+`"}}`)
	h03 := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + alice.Token}
	v03 := openSSE(t, http.DefaultClient, "POST", h.url+"/a2a/jsonrpc", h03,
		`{"jsonrpc":"2.0","id":7,"method":"tasks/resubscribe","params":{"id":"`+tk.ID+`"}}`)
	type env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}
	read := func(s *sseStream, id string) json.RawMessage {
		var e env
		raw := s.next(t)
		if err := json.Unmarshal(raw, &e); err != nil || e.JSONRPC != "2.0" || string(e.ID) != id || e.Result == nil {
			t.Fatalf("event envelope: %s", raw)
		}
		return e.Result
	}
	prototest.Valid(t, prototest.StreamResponse, read(v1, `"sub-1"`))
	if r := read(v03, "7"); !strings.Contains(string(r), `"kind":"task"`) || !strings.Contains(string(r), `"state":"working"`) {
		t.Fatalf("0.3 first event: %s", r)
	}
	if _, err := bc.Reply(bg(), discussionOf(t, tk), "answer"); err != nil {
		t.Fatal(err)
	}
	prototest.Valid(t, prototest.StreamResponse, read(v1, `"sub-1"`))
	last := read(v1, `"sub-1"`)
	prototest.Valid(t, prototest.StreamResponse, last)
	if !strings.Contains(string(last), `"statusUpdate"`) || !strings.Contains(string(last), "TASK_STATE_COMPLETED") {
		t.Fatalf("1.0 last event: %s", last)
	}
	v1.ended(t)
	if r := read(v03, "7"); !strings.Contains(string(r), `"kind":"artifact-update"`) {
		t.Fatalf("0.3 artifact event: %s", r)
	}
	if r := read(v03, "7"); !strings.Contains(string(r), `"kind":"status-update"`) || !strings.Contains(string(r), `"final":true`) ||
		!strings.Contains(string(r), `"state":"completed"`) {
		t.Fatalf("0.3 final event: %s", r)
	}
	v03.ended(t)
	// An error before the stream arrives as the stream's one event.
	errStream := openSSE(t, http.DefaultClient, "POST", h.url+"/a2a/jsonrpc", rpcHeaders,
		`{"jsonrpc":"2.0","id":"sub-2","method":"SubscribeToTask","params":{"id":"`+tk.ID+`"}}`)
	raw := errStream.next(t)
	if !strings.Contains(string(raw), `"error"`) || !strings.Contains(string(raw), "UNSUPPORTED_OPERATION") || !strings.Contains(string(raw), `"sub-2"`) {
		t.Fatalf("subscribe to a terminal task over JSON-RPC: %s", raw)
	}
	errStream.ended(t)
	// A search over a stream is one message, then the end.
	search := openSSE(t, http.DefaultClient, "POST", h.url+"/a2a/jsonrpc", rpcHeaders,
		`{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"q","parts":[{"text":"bbolt"}]}}}`)
	if r := search.next(t); !strings.Contains(string(r), `"message"`) && !strings.Contains(string(r), `"error"`) {
		t.Fatalf("streamed search: %s", r)
	}
	search.ended(t)
}

func TestStreamLimitsAndHeartbeat(t *testing.T) {
	h := start(t, func(c *server.Config) { c.MaxStreamsPerAgent = 2; c.StreamHeartbeat = 50 * time.Millisecond })
	alice, ac := h.agent("alice")
	tk := h.ask(ac, "a1", "limits")
	url := h.url + "/a2a/v1/tasks/" + tk.ID + ":subscribe"
	s1 := openSSE(t, http.DefaultClient, "GET", url, a2aHeaders(alice.Token), "")
	s2 := openSSE(t, http.DefaultClient, "GET", url, a2aHeaders(alice.Token), "")
	s1.next(t)
	s2.next(t)
	resp, body := h.raw("GET", "/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(alice.Token), "")
	if resp.StatusCode != 429 || reason(body) != "RATE_LIMITED" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %d %s", resp.StatusCode, body)
	}
	select {
	case c := <-s1.comments:
		if c != ": keep-alive" {
			t.Fatalf("heartbeat %q", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no heartbeat on an idle stream")
	}
	// Closing a stream frees its slot.
	s2.close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		// Only the status: a 200 here is an open stream, closed at once.
		req, _ := http.NewRequest("GET", url, nil)
		for k, v := range a2aHeaders(alice.Token) {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a closed stream was not freed: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond) // waiting for the server to notice the disconnect
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	tk := h.ask(ac, "a1", "shutdown")
	s := openSSE(t, http.DefaultClient, "GET", h.url+"/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(alice.Token), "")
	s.next(t)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- h.srv.Shutdown(ctx)
	}()
	s.ended(t)
	if err := <-done; err != nil {
		t.Fatalf("shutdown with an open stream: %v", err)
	}
	h.srv = nil
}

// TestThousandSubscribers: 1,000 concurrent streams over 50 tasks on one
// discussion; one qualifying reply completes all 50 tasks in one
// transaction and every stream hears it. No goroutine is left behind.
func TestThousandSubscribers(t *testing.T) {
	raiseFileLimit(t, 4096)
	h := start(t, func(c *server.Config) {
		c.AskRate, c.MaxOpenTasks, c.MaxStreamsPerAgent, c.MaxStreams = 0, 0, 0, 0
	})
	alice, ac := h.agent("alice")
	_, bc := h.agent("bob")
	first := h.ask(ac, "t0", "one question, fifty waiting tasks")
	disc := discussionOf(t, first)
	taskIDs := []string{first.ID}
	for i := 1; i < 50; i++ {
		res, err := ac.SendMessage(bg(), askReq(fmt.Sprintf("t%d", i), "", map[string]any{"discussionId": disc}))
		if err != nil {
			t.Fatal(err)
		}
		taskIDs = append(taskIDs, res.Task.ID)
	}
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: 1100}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	const n = 1000
	streams := make([]*sseStream, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			streams[i] = openSSE(t, client, "GET", h.url+"/a2a/v1/tasks/"+taskIDs[i%len(taskIDs)]+":subscribe", a2aHeaders(alice.Token), "")
			streams[i].next(t)
		}()
	}
	wg.Wait()
	if t.Failed() {
		// A stream that could not open ended its goroutine with the
		// reason logged above, and left a nil in streams.
		for _, s := range streams {
			if s != nil {
				s.close()
			}
		}
		t.FailNow()
	}
	start := time.Now()
	rep, err := bc.Reply(bg(), disc, "one answer for all")
	if err != nil || rep.CompletedTasks != 50 {
		t.Fatalf("reply: %+v %v", rep, err)
	}
	committed := time.Now()
	lat := make([]time.Duration, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := streams[i]
			s.next(t) // artifact
			ev := decodeEvent(t, s.next(t))
			lat[i] = time.Since(committed)
			if ev.StatusUpdate == nil || ev.StatusUpdate.Status.State != a2a.TaskStateCompleted {
				t.Errorf("stream %d: %+v", i, ev)
			}
			s.ended(t)
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	t.Logf("reply completing 50 tasks took %s; reply commit to event: p50 %s, p99 %s over %d streams",
		committed.Sub(start), lat[n/2], lat[n*99/100], n)
	for _, s := range streams {
		s.close()
	}
}
