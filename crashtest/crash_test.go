// Package crashtest kills kfa with SIGKILL under a concurrent write load,
// restarts it, and proves that nothing acknowledged was lost and nothing
// refused was half-applied. KFA_CRASH_CYCLES sets the number of kill
// cycles (3 by default, as in CI; `make crashtest` runs 25).
package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/testbin"
)

const workers = 32

// buildKFA returns the binary under test, built once for the package's
// tests (see internal/testbin).
func buildKFA(t *testing.T, _ string) string {
	t.Helper()
	return testbin.KFA(t)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// proc is one running kfa serve.
type proc struct {
	cmd  *exec.Cmd
	addr string
	logs *strings.Builder // read through logText while it runs
	mu   *sync.Mutex      // guards logs
	done chan struct{}
}

// logText is what the process has logged so far.
func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// serve starts kfa serve on data, and on the PostgreSQL database store
// unless it is empty (bbolt then), with extra flags after the usual ones.
func serve(t *testing.T, bin, data, store string, extra ...string) *proc {
	t.Helper()
	return serveAt(t, bin, data, store, freeAddr(t), extra...)
}

// serveAt is serve on addr, with extra flags: a server restarted after a
// kill keeps its address (its peers and its public URL name it).
func serveAt(t *testing.T, bin, data, store, addr string, extra ...string) *proc {
	t.Helper()
	args := []string{"serve", "--data", data, "--addr", addr,
		"--ask-rate", "0", "--max-open-tasks", "0", "--reply-rate", "0", "--max-replies", "0", "--search-rate", "0", "--auth-fail-rate", "0", "--log-level", "warn",
		"--push-allow", "127.0.0.1"}
	if store != "" {
		args = append(args, "--store", store)
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	logs := &strings.Builder{}
	mu := &sync.Mutex{}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, addr: addr, logs: logs, mu: mu, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	// Ready when /readyz answers 200; the process must not die meanwhile.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("kfa serve exited during start:\n%s", p.logText())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("kfa serve not ready after 30s:\n%s", p.logText())
		}
		time.Sleep(20 * time.Millisecond) // polling a separate process: no other signal exists
	}
}

func (p *proc) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func run(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("kfa %s: %v\n%s\n%s", strings.Join(args, " "), err, out, ee.Stderr)
		}
		t.Fatalf("kfa %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// createAgents makes n agents through the CLI (the server's admin socket)
// and returns their tokens.
func createAgents(t *testing.T, bin, data, prefix string, n int) []string {
	t.Helper()
	var tokens []string
	for i := range n {
		var a struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal(run(t, bin, "agent", "create", "--data", data, "--name", fmt.Sprintf("%s-%d", prefix, i), "--json"), &a); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, a.Token)
	}
	return tokens
}

// mustCheck fails t unless kfa check passes on data, or on the PostgreSQL
// database store when it is set.
func mustCheck(t *testing.T, bin, data, store string) {
	t.Helper()
	args := []string{"check", "--data", data, "--json"}
	if store != "" {
		args = []string{"check", "--store", store, "--json"}
	}
	out := run(t, bin, args...)
	var rep struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || !rep.OK {
		t.Fatalf("kfa check: %v %s", err, out)
	}
}

// ledger is what the server acknowledged, across all cycles.
type ledger struct {
	mu        sync.Mutex
	asked     map[string]string // task id -> owner token
	completed map[string]bool   // task ids a 2xx reply said it completed
	canceled  map[string]bool   // task ids a 2xx cancel returned canceled
	replies   map[string]string // reply id -> discussion id
	acked     map[string]string // inbox entry id -> owner token
	records   map[string]bool   // record ids of imports that exited 0
	// pushTo, when set, is the push receiver every other ask names in
	// an inline config; pushed holds the ids of those acknowledged asks.
	pushTo string
	pushed map[string]bool
}

func newLedger() *ledger {
	return &ledger{asked: map[string]string{}, completed: map[string]bool{}, canceled: map[string]bool{},
		replies: map[string]string{}, acked: map[string]string{}, records: map[string]bool{}, pushed: map[string]bool{}}
}

// load drives asks, replies, cancels and inbox acks from the standard
// number of clients until stop closes.
func load(base string, tokens []string, l *ledger, stop <-chan struct{}) {
	loadN(workers, []string{base}, tokens, l, stop)
}

// loadN is load with n clients, split evenly over the servers at bases.
func loadN(n int, bases []string, tokens []string, l *ledger, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			me := tokens[w%len(tokens)]
			other := tokens[(w+1)%len(tokens)]
			hc := &http.Client{Timeout: 10 * time.Second}
			base := bases[w%len(bases)]
			c := client.New(base, client.WithToken(me), client.WithHTTPClient(hc))
			// The other agent, which answers, works on the next server.
			o := client.New(bases[(w+1)%len(bases)], client.WithToken(other), client.WithHTTPClient(hc))
			ctx := context.Background()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				yes := true
				data, _ := json.Marshal(map[string]any{"action": "ask", "question": fmt.Sprintf("crash question %d/%d", w, n)})
				cfg := &a2a.SendMessageConfiguration{ReturnImmediately: &yes}
				withPush := l.pushTo != "" && n%2 == 0
				if withPush {
					cfg.TaskPushNotificationConfig = json.RawMessage(`{"url":"` + l.pushTo + `","token":"crash"}`)
				}
				res, err := c.SendMessage(ctx, a2a.SendMessageRequest{
					Message:       &a2a.Message{MessageID: fmt.Sprintf("%d-%d-%d", time.Now().UnixNano(), w, n), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(data)}},
					Configuration: cfg,
				})
				if err != nil {
					continue
				}
				tk := res.Task
				l.mu.Lock()
				l.asked[tk.ID] = me
				if withPush {
					l.pushed[tk.ID] = true
				}
				l.mu.Unlock()
				var meta struct {
					DiscussionID string `json:"discussionId"`
				}
				_ = json.Unmarshal(tk.Metadata, &meta)
				switch n % 3 {
				case 0: // answered by another agent
					if r, err := o.Reply(ctx, meta.DiscussionID, "crash answer"); err == nil {
						l.mu.Lock()
						l.replies[r.Reply.ID] = meta.DiscussionID
						for _, id := range r.CompletedIDs {
							l.completed[id] = true
						}
						l.mu.Unlock()
					}
				case 1: // canceled by its owner
					if ct, err := c.CancelTask(ctx, tk.ID); err == nil && ct.Status.State == a2a.TaskStateCanceled {
						l.mu.Lock()
						l.canceled[tk.ID] = true
						l.mu.Unlock()
					}
				}
				if n%5 == 4 {
					if in, err := c.Inbox(ctx, true, 5, ""); err == nil && len(in.Entries) > 0 {
						ids := []string{in.Entries[0].ID}
						if res, err := c.Ack(ctx, ids); err == nil && len(res.Acked)+len(res.AlreadyAcked) == 1 {
							l.mu.Lock()
							l.acked[ids[0]] = me
							l.mu.Unlock()
						}
					}
				}
			}
		}()
	}
	wg.Wait()
}

// verify checks every acknowledged write against the restarted server.
func verify(t *testing.T, base string, l *ledger) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx := context.Background()
	clients := map[string]*client.Client{}
	cl := func(tok string) *client.Client {
		if clients[tok] == nil {
			clients[tok] = client.New(base, client.WithToken(tok))
		}
		return clients[tok]
	}
	for id, tok := range l.asked {
		tk, err := cl(tok).GetTask(ctx, id, nil)
		if err != nil {
			t.Fatalf("acknowledged ask %s lost: %v", id, err)
		}
		switch {
		case l.completed[id] && tk.Status.State != a2a.TaskStateCompleted:
			t.Fatalf("task %s: a reply acknowledged completing it, now %s", id, tk.Status.State)
		case l.canceled[id] && tk.Status.State != a2a.TaskStateCanceled:
			t.Fatalf("task %s: a cancel was acknowledged, now %s", id, tk.Status.State)
		}
	}
	anon := client.New(base)
	byDisc := map[string][]string{}
	for r, d := range l.replies {
		byDisc[d] = append(byDisc[d], r)
	}
	for d, rs := range byDisc {
		got, err := anon.Discussion(ctx, d)
		if err != nil {
			t.Fatalf("discussion %s of an acknowledged reply: %v", d, err)
		}
		have := map[string]bool{}
		for _, r := range got.Replies {
			have[r.ID] = true
		}
		for _, r := range rs {
			if !have[r] {
				t.Fatalf("acknowledged reply %s lost from discussion %s", r, d)
			}
		}
	}
	for id, tok := range l.acked {
		in, err := cl(tok).Inbox(ctx, false, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		for tokn := in.NextPageToken; ; {
			for _, e := range in.Entries {
				if e.ID == id && e.AckedAt == nil {
					t.Fatalf("acknowledged inbox ack %s lost", id)
				}
			}
			if tokn == "" {
				break
			}
			if in, err = cl(tok).Inbox(ctx, false, 100, tokn); err != nil {
				t.Fatal(err)
			}
			tokn = in.NextPageToken
		}
	}
}

func TestCrashRecovery(t *testing.T) { crashRecovery(t, "") }

// crashCycles is the number of kill cycles: KFA_CRASH_CYCLES, or 3.
func crashCycles(t *testing.T) int {
	t.Helper()
	v := os.Getenv("KFA_CRASH_CYCLES")
	if v == "" {
		return 3
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("KFA_CRASH_CYCLES=%q: want a positive number", v)
	}
	return n
}

// crashRecovery kills kfa serve under load, on bbolt or (store set) on
// that PostgreSQL database, restarts it and verifies everything.
func crashRecovery(t *testing.T, store string) {
	cycles := crashCycles(t)
	dir, err := os.MkdirTemp("", "kfa-crash-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := buildKFA(t, dir)
	data := filepath.Join(dir, "data")

	p := serve(t, bin, data, store)
	tokens := createAgents(t, bin, data, "crash", 8)
	l := newLedger()
	recv := newPushReceiver(t)
	l.pushTo = recv.url
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for cycle := range cycles {
		// One import before the load, acknowledged for sure: on
		// PostgreSQL an import under this load waits behind the search
		// index's discussion indexing and rarely returns before the kill.
		if err := importBatch(bin, data, dir, l, -1-cycle); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		imported := make(chan struct{})
		go func() { load("http://"+p.addr, tokens, l, stop); close(done) }()
		go func() { importRecords(bin, data, dir, l, stop); close(imported) }()
		// Kill at a random moment under load.
		time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond) // the random moment is the point
		p.kill(t)
		close(stop)
		<-done
		<-imported
		p = serve(t, bin, data, store)
		verify(t, "http://"+p.addr, l)
		verifyRecords(t, bin, data, l)
		pushes := verifyPushes(t, "http://"+p.addr, recv, l)
		mustCheck(t, bin, data, store)
		l.mu.Lock()
		t.Logf("cycle %d: killed under load; %d acknowledged asks, %d completions, %d cancels, %d replies, %d acks, %d imported records verified; %s; kfa check passes",
			cycle+1, len(l.asked), len(l.completed), len(l.canceled), len(l.replies), len(l.acked), len(l.records), pushes)
		l.mu.Unlock()
	}
	p.kill(t)
}

// TestSIGTERMUnderLoad sends SIGTERM while 64 clients write: kfa drains and
// exits 0, every acknowledged write is there after a restart, and the
// store passes kfa check.
func TestSIGTERMUnderLoad(t *testing.T) {
	dir, err := os.MkdirTemp("", "kfa-term-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := buildKFA(t, dir)
	data := filepath.Join(dir, "data")
	p := serve(t, bin, data, "")
	tokens := createAgents(t, bin, data, "term", 16)
	l := newLedger()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { loadN(64, []string{"http://" + p.addr}, tokens, l, stop); close(done) }()
	// Wait for the load to be under way, then ask kfa to stop.
	for deadline := time.Now().Add(2 * time.Minute); ; {
		l.mu.Lock()
		n := len(l.asked)
		l.mu.Unlock()
		if n >= 200 {
			break
		}
		if time.Now().After(deadline) {
			close(stop)
			t.Fatalf("only %d asks acknowledged after 2 minutes of load, want 200", n)
		}
		time.Sleep(10 * time.Millisecond) // watching another process's progress
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.done
	close(stop)
	<-done
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("kfa exited %d after SIGTERM:\n%s", code, p.logText())
	}
	p = serve(t, bin, data, "")
	defer p.kill(t)
	verify(t, "http://"+p.addr, l)
	mustCheck(t, bin, data, "")
	t.Logf("SIGTERM under 64 writers: exit 0; %d acknowledged asks, %d completions, %d cancels verified; kfa check passes",
		len(l.asked), len(l.completed), len(l.canceled))
}
