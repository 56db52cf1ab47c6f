package e2e

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/kfa-project/kfa/server"
)

// TestGRPCStreamClosedMidCall: a client that goes away in the middle of a
// stream ends it on the server (no stream is left open, nothing is
// written), and the task it followed can be followed again.
func TestGRPCStreamClosedMidCall(t *testing.T) {
	h := start(t, withGRPC)
	alice, ac := h.agent("alice")
	tk := h.ask(ac, "g1", "followed, then dropped")
	c := h.grpcClient()
	before := h.digest()
	for i := range 3 {
		ctx, cancel := grpcCtx(alice.Token)
		st, err := c.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: tk.ID})
		if err != nil {
			t.Fatal(err)
		}
		first, err := st.Recv()
		if err != nil || first.GetTask().GetId() != tk.ID {
			t.Fatalf("round %d: first event %v %v", i, first, err)
		}
		cancel() // the client goes away mid-stream
		waitFor(t, "the server to end the stream", func() bool { return h.srv.OpenStreams() == 0 })
	}
	if h.digest() != before {
		t.Fatal("a dropped stream changed the store")
	}
	if got := h.task(ac, tk.ID); got.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("the task after its streams dropped: %+v", got.Status)
	}
}

// TestGRPCStreamNotRead: a client that opens 20,000 streams on one
// connection and never reads (its TCP socket unread, no window updates:
// the server can send it 64 KiB in all) holds a bounded amount of the
// server: past the streams a connection may hold, gRPC refuses the new
// ones (or stops reading the connection), so only a few hundred are ever
// answered; the server's goroutines and heap stay within bounds, other
// clients are served meanwhile, and closing the connection frees
// everything it held.
func TestGRPCStreamNotRead(t *testing.T) {
	h := start(t, func(c *server.Config) {
		withGRPC(c)
		c.SearchRate, c.AskRate, c.MaxOpenTasks, c.RequestRate = 0, 0, 0, 0
	})
	alice, ac := h.agent("alice")
	var tasks []string
	for i := range 40 {
		tasks = append(tasks, h.ask(ac, fmt.Sprintf("n%d", i), fmt.Sprintf("a question nobody reads the answer of %d", i)).ID)
	}
	c := h.grpcClient()
	// The client used below is warm, and the baseline is taken once the
	// server is idle.
	ctx, cancel := grpcCtx(alice.Token)
	if _, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Id: tasks[0]}); err != nil {
		t.Fatal(err)
	}
	cancel()
	g0, heap0 := runtime.NumGoroutine(), heapInUse()

	conn, err := net.Dial("tcp", h.srv.GRPCAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w := &deadlineWriter{conn: conn}
	fr := http2.NewFramer(w, nil)
	if _, err := w.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	search := mustProto(t, &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "s", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "bbolt timeout"}}}}})
	const attempts = 20000
	opened, blocked := 0, false
	for i := range attempts {
		method, body, token := "SendStreamingMessage", search, ""
		if i < len(tasks) {
			method, body, token = "SubscribeToTask", mustProto(t, &a2apb.SubscribeToTaskRequest{Id: tasks[i]}), alice.Token
		}
		if err := openStream(fr, uint32(2*i+1), h.srv.GRPCAddr(), method, token, body); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			blocked = true // the server stopped reading this connection
			break
		}
		opened++
	}
	// What the server holds for it, once it has done what it will.
	waitFor(t, "the server to settle", func() bool {
		g := runtime.NumGoroutine()
		time.Sleep(200 * time.Millisecond)
		return runtime.NumGoroutine() == g
	})
	g1, heap1 := runtime.NumGoroutine(), heapInUse()
	answered := strings.Count(h.logBuf.String(), "method=SendStreamingMessage")
	t.Logf("a client that reads nothing wrote %d streams (the server stopped reading it: %v); %d were answered; "+
		"the server holds %d goroutines and %d KiB more", opened, blocked, answered, g1-g0, (heap1-heap0)>>10)
	if answered > attempts/10 {
		t.Errorf("%d of %d streams answered to a client that reads none", answered, opened)
	}
	if g1-g0 > 400 {
		t.Errorf("%d goroutines for one unread connection", g1-g0)
	}
	if heap1-heap0 > 16<<20 {
		t.Errorf("%d MiB of heap for one unread connection", (heap1-heap0)>>20)
	}
	// Others are served meanwhile.
	ctx, cancel = grpcCtx(alice.Token)
	defer cancel()
	if got, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Id: tasks[0]}); err != nil || got.GetId() != tasks[0] {
		t.Fatalf("another client, while one reads nothing: %v %v", got, err)
	}
	// Closing the connection frees what it held.
	_ = conn.Close()
	waitFor(t, "the unread streams to end", func() bool { return h.srv.OpenStreams() == 0 })
	waitFor(t, "the goroutines of the connection to end", func() bool { return runtime.NumGoroutine() <= g0+10 })
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// deadlineWriter gives each write to conn a deadline: a write that
// cannot finish means the peer stopped reading.
type deadlineWriter struct{ conn net.Conn }

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
	return w.conn.Write(p)
}

// openStream writes the HEADERS and DATA frames of one call of method
// with body, half-closing it: what a gRPC client sends.
func openStream(fr *http2.Framer, id uint32, authority, method, token string, body []byte) error {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", "/lf.a2a.v1.A2AService/" + method}, {":authority", authority},
		{"content-type", "application/grpc"}, {"te", "trailers"}, {"a2a-version", "1.0"},
	} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return err
		}
	}
	if token != "" {
		if err := enc.WriteField(hpack.HeaderField{Name: "authorization", Value: "Bearer " + token}); err != nil {
			return err
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
		return err
	}
	msg := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(msg[1:], uint32(len(body)))
	return fr.WriteData(id, true, append(msg, body...))
}

// TestGRPCShutdownEndsStreams: shutting the server down ends its gRPC
// streams first, as its SSE streams, so draining does not wait out its
// deadline for them; a call after it finds no server.
func TestGRPCShutdownEndsStreams(t *testing.T) {
	h := start(t, withGRPC)
	alice, ac := h.agent("alice")
	tk := h.ask(ac, "g1", "followed through a shutdown")
	c := h.grpcClient()
	ctx, cancel := grpcCtx(alice.Token)
	defer cancel()
	st, err := c.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: tk.ID})
	if err != nil {
		t.Fatal(err)
	}
	if first, err := st.Recv(); err != nil || first.GetTask().GetId() != tk.ID {
		t.Fatalf("first event: %v %v", first, err)
	}
	began := time.Now()
	h.stop()
	if took := time.Since(began); took > h.cfg.ShutdownTimeout/2 {
		t.Errorf("shutdown took %s with a gRPC stream open", took)
	}
	if ev, err := st.Recv(); err == nil {
		t.Fatalf("the stream went on after shutdown: %v", ev)
	}
	ctx2, cancel2 := grpcCtx(alice.Token)
	defer cancel2()
	if _, err := c.GetTask(ctx2, &a2apb.GetTaskRequest{Id: tk.ID}); err == nil {
		t.Fatal("a call after shutdown was answered")
	}
}
