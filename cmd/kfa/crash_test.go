package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/testbin"
	"github.com/kfa-project/kfa/knowledge"
)

// buildKFA returns the kfa binary, built once for the package's tests
// (see internal/testbin).
func buildKFA(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the kfa binary")
	}
	return testbin.KFA(t)
}

// process is a running kfa serve.
type process struct {
	cmd  *exec.Cmd
	base string
	done chan error
	logs chan string // the index's start-up log lines
}

// serve starts kfa serve on a free port and waits until it listens.
func serve(t *testing.T, bin, data string) *process {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", data, "--addr", "127.0.0.1:0", "--search-rate", "0", "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1), logs: make(chan string, 16)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var l struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			switch {
			case l.Msg == "kfa serving":
				addr <- l.Addr
			case strings.Contains(l.Msg, "search index"):
				select {
				case p.logs <- sc.Text():
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { p.kill() })
	select {
	case a := <-addr:
		p.base = "http://" + a
	case err := <-p.done:
		t.Fatalf("kfa serve exited before listening: %v", err)
	case <-time.After(2 * time.Minute): // a 100,000-record rebuild takes a while
		t.Fatal("kfa serve did not start listening in 2 minutes")
	}
	return p
}

// kill ends the server with SIGKILL: no shutdown, no flush, like a crash.
func (p *process) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		<-p.done
		p.done <- nil // later kills return at once
	}
}

// stop ends the server with SIGTERM and waits for its orderly exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- nil
		if err != nil {
			t.Fatalf("kfa serve exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("kfa serve did not stop in 20s")
	}
}

// top is the id of the first hit for query, or "".
func top(t *testing.T, base, query string) string {
	t.Helper()
	resp, err := client.New(base).SendMessage(context.Background(), a2a.SendMessageRequest{Message: &a2a.Message{
		Role: a2a.RoleUser, MessageID: "m", Parts: []a2a.Part{a2a.TextPart(query)},
	}})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	var data struct {
		Results []knowledge.Hit `json:"results"`
	}
	if resp.Message == nil || len(resp.Message.Parts) != 2 || json.Unmarshal(resp.Message.Parts[1].Data, &data) != nil {
		t.Fatalf("search answer %+v", resp)
	}
	if len(data.Results) == 0 {
		return ""
	}
	return data.Results[0].ID
}

func crashID(i int) string  { return fmt.Sprintf("crash-%05d", i) }
func crashTok(i int) string { return fmt.Sprintf("crashtok%05d", i) }

func crashLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, `{"id":%q,"kind":"fix","title":"Crash test record %s","body":"Written by the crash test, line %d."}`+"\n",
			crashID(i), crashTok(i), i)
	}
	return b.String()
}

// committed lists the records of a data directory with no server
// running (the CLI opens the file itself).
func committed(t *testing.T, bin, data string) []api.Record {
	t.Helper()
	out, err := exec.Command(bin, "records", "list", "--limit", "0", "--json", "--data", data).Output()
	if err != nil {
		t.Fatalf("records list: %v", err)
	}
	var recs []api.Record
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestCrashDuringImport kills the server in the middle of an import. Every
// batch it committed must be complete (batches are transactions) and
// searchable after a restart, the index catching up from the feed; and a
// deleted index directory is rebuilt on the next start.
func TestCrashDuringImport(t *testing.T) {
	t.Parallel() // seconds of waiting on processes and I/O: overlap it with the other slow tests
	bin := buildKFA(t)
	data := filepath.Join(t.TempDir(), "data")
	srv := serve(t, bin, data)

	imp := exec.Command(bin, "records", "import", "-", "--data", data)
	stdin, err := imp.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var impErr strings.Builder
	imp.Stderr = &impErr
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	// Three batches, then wait until the third is searchable: the import
	// is now mid-way, its request still open.
	const b = knowledge.DefaultBatchSize
	if _, err := io.WriteString(stdin, crashLines(1, 3*b)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for top(t, srv.base, crashTok(3*b)) != crashID(3*b) {
		if time.Now().After(deadline) {
			t.Fatal("the first batches never became searchable")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One more batch and part of the next; kill the server as soon as the
	// fourth batch is searchable (or after a second), while the bleve
	// index may not have persisted it yet and the fifth is half read.
	go func() { _, _ = io.WriteString(stdin, crashLines(3*b+1, 4*b+b/2)) }()
	deadline = time.Now().Add(time.Second)
	for time.Now().Before(deadline) && top(t, srv.base, crashTok(4*b)) != crashID(4*b) {
		time.Sleep(time.Millisecond)
	}
	srv.kill()
	_ = stdin.Close()
	if err := imp.Wait(); err == nil {
		t.Fatal("the import reported success although the server was killed")
	}
	if !strings.Contains(impErr.String(), "run the same import again") {
		t.Errorf("import error output %q does not say what to do", impErr.String())
	}

	recs := committed(t, bin, data)
	n := len(recs)
	if n < 3*b || n > 4*b+b/2 || n%b != 0 {
		t.Fatalf("%d records committed; want whole batches of %d, at least three", n, b)
	}
	for i, r := range recs {
		if r.ID != crashID(i+1) {
			t.Fatalf("record %d is %s, want %s", i, r.ID, crashID(i+1))
		}
	}
	t.Logf("%d records committed before the kill", n)

	// Every committed record is indexed (the index's own count, from its
	// start-up log line), and searchable: the first and last of each batch
	// and a sample between. Searching all of them, over 3,000 requests
	// twice, was most of this test's minute.
	check := func(p *process) {
		t.Helper()
		if got := indexedRecords(t, p); got != n {
			t.Fatalf("the index holds %d records after the restart, want the %d committed", got, n)
		}
		for i := 1; i <= n; i++ {
			if i%b > 1 && i%37 != 0 {
				continue
			}
			if got := top(t, p.base, crashTok(i)); got != crashID(i) {
				t.Fatalf("committed record %s: search found %q", crashID(i), got)
			}
		}
		if n < 4*b+b/2 {
			if got := top(t, p.base, crashTok(n+1)); got != "" {
				t.Fatalf("uncommitted record %s is found", got)
			}
		}
	}
	srv = serve(t, bin, data)
	check(srv)

	srv.stop(t)
	if err := os.RemoveAll(filepath.Join(data, "index")); err != nil {
		t.Fatal(err)
	}
	srv = serve(t, bin, data)
	check(srv)
	if _, err := os.Stat(filepath.Join(data, "index", "records")); err != nil {
		t.Fatalf("the index was not rebuilt: %v", err)
	}
	srv.stop(t)
}

// indexedRecords is the record count of the search index's "ready" log
// line, which kfa serve writes before it listens.
func indexedRecords(t *testing.T, p *process) int {
	t.Helper()
	lines := drain(p.logs)
	t.Logf("index start-up: %s", strings.Join(lines, "; "))
	for _, l := range lines {
		var v struct {
			Msg     string `json:"msg"`
			Records *int   `json:"records"`
		}
		if json.Unmarshal([]byte(l), &v) == nil && v.Msg == "search index ready" && v.Records != nil {
			return *v.Records
		}
	}
	t.Fatalf("no \"search index ready\" line with a record count among %q", lines)
	return 0
}

func drain(c chan string) []string {
	var out []string
	for {
		select {
		case l := <-c:
			out = append(out, l)
		default:
			return out
		}
	}
}
