package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/server"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// shortTempDir is a temp dir with a short path: unix socket paths are
// limited to 107 bytes, and t.TempDir embeds the test name.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kfa-cli-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
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

// live is a running server on a temp data directory.
type live struct {
	t    *testing.T
	dir  string
	srv  *server.Server
	url  string
	logs *syncBuffer
}

func startServer(t *testing.T, dir string, mutate func(*server.Config)) *live {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.PublicURL = "http://kfa.test"
	cfg.BatchDelay = time.Millisecond
	if mutate != nil {
		mutate(&cfg)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	l := &live{t: t, dir: dir, srv: srv, url: srv.URL(), logs: logs}
	t.Cleanup(func() {
		l.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return l
}

// stop shuts the server down (idempotent).
func (l *live) stop() {
	if l.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.srv.Shutdown(ctx); err != nil {
		l.t.Errorf("shutdown: %v", err)
	}
	l.srv = nil
}

// result is one CLI run.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// kfa runs the CLI in-process with no KFA_* variables set.
func kfa(t *testing.T, args ...string) result {
	t.Helper()
	return kfaIn(t, "", args...)
}

// kfaIn runs the CLI with stdin.
func kfaIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runEnv(context.Background(), e, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// ok runs the CLI and wants exit 0.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := kfa(t, args...)
	if r.code != 0 {
		t.Fatalf("kfa %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// decode runs the CLI with --json and decodes its output.
func decode[T any](t *testing.T, args ...string) T {
	t.Helper()
	var v T
	out := ok(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kfa %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// tick waits until the millisecond clock moves past t, so that the next
// write gets a later status timestamp than the last one (listings order
// by it, and goldens need a stable order).
func tick(t time.Time) {
	for time.Now().UnixMilli() <= t.UnixMilli() {
		time.Sleep(100 * time.Microsecond)
	}
}

var (
	ulidRE  = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	timeRE  = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
	tokenRE = regexp.MustCompile(`"nextPageToken": "[^"]+"`)
	numRE   = regexp.MustCompile(`"(sizeBytes|bytes|freePages|pendingPages|durationMs|pid|schemaVersion)": \d+`)
	hexRE   = regexp.MustCompile(`"(sha256|keyHex)": "[0-9a-f]+"`)
	// The live server knows its index lag; a stopped data directory does not.
	lagRE = regexp.MustCompile(`"indexLag": (\d+|null)`)
)

// normalize replaces what changes from run to run: ids (numbered in
// order of appearance, so the same id keeps the same name), times, page
// tokens, sizes, digests and the temp directory.
func normalize(s string, dirs map[string]string) string {
	for dir, name := range dirs {
		s = strings.ReplaceAll(s, dir, name)
	}
	ids := map[string]string{}
	s = ulidRE.ReplaceAllStringFunc(s, func(id string) string {
		if n, ok := ids[id]; ok {
			return n
		}
		n := fmt.Sprintf("<ID%d>", len(ids)+1)
		ids[id] = n
		return n
	})
	s = timeRE.ReplaceAllString(s, "<TIME>")
	s = tokenRE.ReplaceAllString(s, `"nextPageToken": "<TOKEN>"`)
	s = numRE.ReplaceAllString(s, `"$1": "<N>"`)
	s = hexRE.ReplaceAllString(s, `"$1": "<HEX>"`)
	s = lagRE.ReplaceAllString(s, `"indexLag": "<LAG>"`)
	return s
}

// golden compares got with testdata/name.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fixture is a data directory with agents, tasks in every state, replies
// and inbox entries, written through the real server.
type fixture struct {
	dir                     string
	alice, bob, rita, gone  api.Agent
	done, canceled, waiting a2a.Task // alice's
	bobs                    a2a.Task // bob's, waiting
	srv                     *live
}

func askReq(msgID, ctxID, question string) a2a.SendMessageRequest {
	data, _ := json.Marshal(map[string]string{"action": "ask", "question": question, "details": "Details of " + msgID + ".\nSecond line."})
	yes := true
	return a2a.SendMessageRequest{
		Message:       &a2a.Message{MessageID: msgID, ContextID: ctxID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(data)}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes},
	}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := filepath.Join(shortTempDir(t), "data")
	f := &fixture{dir: dir, srv: startServer(t, dir, nil)}
	f.alice = decode[api.Agent](t, "agent", "create", "--data", dir, "--name", "alice")
	f.bob = decode[api.Agent](t, "agent", "create", "--data", dir, "--name", "bob")
	f.rita = decode[api.Agent](t, "agent", "create", "--data", dir, "--name", "rita", "--scope", "read")
	f.gone = decode[api.Agent](t, "agent", "create", "--data", dir, "--name", "gone")
	ok(t, "agent", "revoke", f.gone.ID, "--data", dir)
	ac := client.New(f.srv.url, client.WithToken(f.alice.Token))
	bc := client.New(f.srv.url, client.WithToken(f.bob.Token))
	ctx := context.Background()
	ask := func(c *client.Client, msgID, ctxID, q string) a2a.Task {
		t.Helper()
		res, err := c.SendMessage(ctx, askReq(msgID, ctxID, q))
		if err != nil || res.Task == nil {
			t.Fatalf("ask %s: %v %+v", msgID, err, res)
		}
		ts, _ := a2a.ParseTime(res.Task.Status.Timestamp)
		tick(ts)
		return *res.Task
	}
	f.done = ask(ac, "m-1", "ctx-a", "How do I take a hot backup of bbolt?")
	f.canceled = ask(ac, "m-2", "ctx-a", "Which port does kfa listen on?")
	f.waiting = ask(ac, "m-3", "ctx-b", "Is there a PostgreSQL store yet?")
	f.bobs = ask(bc, "m-4", "ctx-c", "How are inbox entries acknowledged?")
	rep, err := bc.Reply(ctx, discussionOf(t, f.done), "Run Tx.WriteTo inside a read transaction.")
	if err != nil || rep.CompletedTasks != 1 {
		t.Fatalf("bob's reply: %+v %v", rep, err)
	}
	at, _ := a2a.ParseTime(rep.Reply.CreatedAt)
	tick(at)
	if _, err := ac.CancelTask(ctx, f.canceled.ID); err != nil {
		t.Fatal(err)
	}
	inbox, err := ac.Inbox(ctx, false, 0, "")
	if err != nil || len(inbox.Entries) != 1 {
		t.Fatalf("alice's inbox: %+v %v", inbox, err)
	}
	if _, err := ac.Ack(ctx, []string{inbox.Entries[0].ID}); err != nil {
		t.Fatal(err)
	}
	return f
}

func discussionOf(t *testing.T, tk a2a.Task) string {
	t.Helper()
	var m struct {
		DiscussionID string `json:"discussionId"`
	}
	if err := json.Unmarshal(tk.Metadata, &m); err != nil || m.DiscussionID == "" {
		t.Fatalf("task %s has no discussion: %s", tk.ID, tk.Metadata)
	}
	return m.DiscussionID
}

// run and golden-compare one --json command.
func (f *fixture) golden(t *testing.T, name string, args ...string) string {
	t.Helper()
	out := ok(t, append(append(args, "--data", f.dir), "--json")...)
	golden(t, name, normalize(out, map[string]string{f.dir: "<DATA>"}))
	return out
}
