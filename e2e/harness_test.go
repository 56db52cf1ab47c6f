package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
)

// harness is one running server with its data directory.
type harness struct {
	t      *testing.T
	cfg    server.Config
	srv    *server.Server
	url    string
	anon   *client.Client
	admin  *client.Client
	logBuf *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// shortTempDir is a temp dir with a short path: unix socket paths are
// limited to 107 bytes, and t.TempDir embeds the test name.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kfa-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// EnvStore, set to "postgres", runs every server of the suite on a fresh
// PostgreSQL database (internal/pgtest: KFA_TEST_POSTGRES names the
// server) instead of a bbolt file.
const EnvStore = "KFA_E2E_STORE"

// onPostgres reports whether the suite runs on PostgreSQL.
func onPostgres() bool { return os.Getenv(EnvStore) == "postgres" }

// start runs a server on 127.0.0.1:0 with a fresh data directory; mutate
// may change the configuration first.
func start(t *testing.T, mutate func(*server.Config)) *harness {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = filepath.Join(shortTempDir(t), "data")
	cfg.PublicURL = "http://kfa.test"
	cfg.BatchDelay = time.Millisecond
	if onPostgres() {
		cfg.Store = pgtest.URL(t)
	}
	if mutate != nil {
		mutate(&cfg)
	}
	return startWith(t, cfg)
}

func startWith(t *testing.T, cfg server.Config) *harness {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := server.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, cfg: cfg, srv: srv, url: srv.URL(), logBuf: logs}
	h.anon = client.New(h.url)
	h.admin = client.NewUnix(filepath.Join(cfg.DataDir, "kfa.sock"))
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return h
}

// stop shuts the server down (idempotent).
func (h *harness) stop() {
	if h.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Whatever a test did, it must leave a store that passes kfa check
	// (which runs on the bbolt file only, for now).
	if h.srv.Core().DB == nil {
		// PostgreSQL: no kfa check yet.
	} else if rep, err := h.srv.Core().DB.Check(ctx); err != nil {
		h.t.Errorf("kfa check: %v", err)
	} else if !rep.OK() {
		h.t.Errorf("kfa check found %d violations: %+v", len(rep.Violations), rep.Violations)
	}
	if err := h.srv.Shutdown(ctx); err != nil {
		h.t.Errorf("shutdown: %v", err)
	}
	h.srv = nil
}

// agent creates an agent through the admin socket and returns it with a
// client that sends its token.
func (h *harness) agent(name string, scopes ...string) (api.Agent, *client.Client) {
	h.t.Helper()
	if len(scopes) == 0 {
		scopes = []string{"read", "post"}
	}
	a, err := h.admin.CreateAgent(context.Background(), name, scopes)
	if err != nil {
		h.t.Fatalf("create agent %s: %v", name, err)
	}
	return a, client.New(h.url, client.WithToken(a.Token))
}

func (h *harness) digest() string {
	h.t.Helper()
	d, err := h.srv.Core().Store.(interface{ Digest() (string, error) }).Digest()
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// raw sends one request with exactly the given headers.
func (h *harness) raw(method, path string, headers map[string]string, body string) (*http.Response, []byte) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// a2aHeaders are the headers of a well-formed A2A request, plus extras.
func a2aHeaders(token string, extra ...string) map[string]string {
	m := map[string]string{"A2A-Version": "1.0", "Content-Type": "application/json"}
	if token != "" {
		m["Authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(m, extra[i])
		} else {
			m[extra[i]] = extra[i+1]
		}
	}
	return m
}

// reason returns the ErrorInfo reason of an error body, or "".
func reason(body []byte) string {
	var s a2a.StatusBody
	if json.Unmarshal(body, &s) != nil {
		return ""
	}
	for _, d := range s.Error.Details {
		if m, ok := d.(map[string]any); ok && m["@type"] == a2a.TypeErrorInfo {
			r, _ := m["reason"].(string)
			return r
		}
	}
	return ""
}

// askReq is a SendMessage request for an ask.
func askReq(msgID, question string, extra map[string]any) a2a.SendMessageRequest {
	data := map[string]any{"action": "ask", "question": question}
	for k, v := range extra {
		data[k] = v
	}
	b, _ := json.Marshal(data)
	yes := true
	return a2a.SendMessageRequest{
		Message:       &a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(b)}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes},
	}
}

func (h *harness) ask(c *client.Client, msgID, question string) a2a.Task {
	h.t.Helper()
	res, err := c.SendMessage(context.Background(), askReq(msgID, question, nil))
	if err != nil {
		h.t.Fatalf("ask %s: %v", msgID, err)
	}
	if res.Task == nil {
		h.t.Fatalf("ask %s: no task in %+v", msgID, res)
	}
	return *res.Task
}

func discussionOf(t *testing.T, tk a2a.Task) string {
	t.Helper()
	var m struct {
		DiscussionID string `json:"discussionId"`
	}
	if err := json.Unmarshal(tk.Metadata, &m); err != nil || m.DiscussionID == "" {
		t.Fatalf("task %s has no metadata.discussionId: %s", tk.ID, tk.Metadata)
	}
	return m.DiscussionID
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type serverConfig = server.Config

func bg() context.Context { return context.Background() }

func sortStrings(s []string) { slices.Sort(s) }
