package docs

// Running the examples: each page on a server of its own (a reader who
// opens just that page after `make run`), and every page one after the
// other on one server, in the order the README leads a reader to them (a
// reader who reads on): a page must work either way.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/testbin"
)

// exampleEnv is what every run of the examples shares.
type exampleEnv struct {
	kfa     string      // the binary under test
	shim    string      // a directory whose curl fails on HTTP errors
	samples string      // the clone's samples, copied into each working directory
	box     *sandboxCmd // nil: no read-only sandbox here
}

// setupExamples finds the tools the examples need (skipping without one,
// failing under CI) and builds kfa.
func setupExamples(t *testing.T) exampleEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("builds kfa and runs every example against a server")
	}
	tools := map[string]string{}
	for _, tool := range []string{"bash", "curl", "jq", "openssl"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; CI must install it (.ci/run installs jq, curl and openssl)", tool)
			}
			t.Skipf("the docs examples need %s: install it (apt-get install %s) to run them", tool, tool)
		}
		tools[tool] = p
	}
	ex := exampleEnv{kfa: testbin.KFA(t), samples: filepath.Join("..", "samples"), box: sandbox(t)}
	// curl fails on HTTP errors, so an example that gets one fails here.
	ex.shim = filepath.Join(t.TempDir(), "shim")
	if err := os.MkdirAll(ex.shim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ex.shim, "curl"), []byte("#!/bin/sh\nexec "+tools["curl"]+" --fail-with-body \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ex
}

// docPage is a page with examples to run.
type docPage struct {
	name     string
	blocks   []block  // the ones that run
	serveEnv []string // what the page's server runs with (serve-env markers)
}

// runnablePages are the pages that have examples to run, in reading order.
func runnablePages(t *testing.T) []docPage {
	t.Helper()
	files := pages(t)
	var out []docPage
	for _, name := range readingOrder(t, files) {
		b, err := os.ReadFile(files[name])
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseBlocks(name, string(b))
		if err != nil {
			t.Fatal(err)
		}
		p := docPage{name: name}
		for _, bl := range blocks {
			if bl.skip == "" {
				p.blocks = append(p.blocks, bl)
			}
		}
		if len(p.blocks) == 0 {
			continue // a page of prose and output only
		}
		if p.serveEnv, err = serveEnv(string(b)); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// docLink is a link from the README to a page of docs/.
var docLink = regexp.MustCompile(`\bdocs/([a-z0-9-]+\.md)\b`)

// readingOrder is the order a reader meets the pages: the README, then
// the pages in the order the README first links them, then the pages it
// does not link (by name).
func readingOrder(t *testing.T, files map[string]string) []string {
	t.Helper()
	readme, err := os.ReadFile(files["README.md"])
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"README.md"}
	for _, m := range docLink.FindAllStringSubmatch(string(readme), -1) {
		if name := "docs/" + m[1]; files[name] != "" && !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	var rest []string
	for name := range files {
		if !slices.Contains(order, name) {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(order, rest...)
}

// TestExamples runs the examples of each page against a server of its
// own, as a reader who opens only that page after `make run`.
func TestExamples(t *testing.T) {
	ex := setupExamples(t)
	for _, p := range runnablePages(t) {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			d := newPageDirs(t, ex, helpers(t, p.blocks))
			env, extra := grpcPage(t, p.serveEnv)
			srv := startServer(t, ex.kfa, d, env)
			runBlocks(t, ex, d, srv.base, p.blocks, extra)
		})
	}
}

// TestExamplesInSequence runs every page, in reading order, against one
// server and one clone, as a reader who follows the README and then the
// pages it leads to: a page must work on a server the pages before it
// used (their agents, asks and records are there). Each page gets a
// fresh shell, as nothing carries from one page to the next but the
// server. A page that asks for another server environment gets it by a
// restart on the same data, as the page tells the reader.
func TestExamplesInSequence(t *testing.T) {
	ex := setupExamples(t)
	pages := runnablePages(t)
	var all []block
	for _, p := range pages {
		all = append(all, p.blocks...)
	}
	d := newPageDirs(t, ex, helpers(t, all))
	var (
		srv   *kfaServer
		asked []string // the serve-env srv runs with, as the page says it
		extra pageExtras
	)
	for _, p := range pages {
		if srv == nil || !slices.Equal(asked, p.serveEnv) {
			if srv != nil {
				srv.stop()
			}
			var env []string
			env, extra = grpcPage(t, p.serveEnv)
			srv, asked = startServer(t, ex.kfa, d, env), p.serveEnv
		}
		t.Run(p.name, func(t *testing.T) { runBlocks(t, ex, d, srv.base, p.blocks, extra) })
	}
}

// runBlocks runs blocks in one bash in d's working directory against the
// server at base (and what extra adds: a gRPC address, grpcurl), and
// fails t naming the block that failed, or the files the blocks left in
// the working directory.
func runBlocks(t *testing.T, ex exampleEnv, d pageDirs, base string, blocks []block, extra pageExtras) {
	t.Helper()
	work := d.clone
	before, err := snapshot(work)
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -a -euo pipefail\ncd " + shellQuote(work) + "\n")
	second := secondServerPort(t)
	for i, bl := range blocks {
		text := strings.ReplaceAll(bl.text, "http://127.0.0.1:8080", base)
		text = second.Replace(text)
		if len(extra.repl) > 0 {
			text = strings.NewReplacer(extra.repl...).Replace(text)
		}
		fmt.Fprintf(&script, "echo '::docs-test %d' >&2\n", i)
		if bl.fails {
			// Its own bash, so that errexit holds inside it; set -a above
			// exported the page's variables to it.
			f, err := os.CreateTemp(d.tmp, "block-*.sh")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(text); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&script, "if bash -euo pipefail %s; then echo '::docs-test unexpected success' >&2; exit 1; fi\n", shellQuote(f.Name()))
			continue
		}
		script.WriteString(text)
	}
	script.WriteString("echo '::docs-test done' >&2\n")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hung example, not a slow one
	defer cancel()
	cmd := ex.box.command(ctx, d.root, script.String())
	cmd.Dir = work
	cmd.Env = pageEnv(d, ex.shim)
	if extra.path != "" {
		// Tools from outside the clone go on PATH, as installed ones
		// would be.
		cmd.Env = append(cmd.Env, "PATH="+extra.path+string(os.PathListSeparator)+ex.shim+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	// What the page left running in the background (a stream, a receiver
	// an example that failed did not stop) goes with its shell, as it
	// would with the reader's terminal.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	log := out.String()
	if err == nil && strings.HasSuffix(log, "::docs-test done\n") {
		if testing.Verbose() {
			t.Logf("output:\n%s", log)
		}
		t.Logf("%d examples ran%s", len(blocks), ex.box.note())
		if left := leftovers(t, work, before); len(left) > 0 {
			t.Fatalf("the examples left files in the working directory, which is the reader's clone: %s; "+
				"write them under $(mktemp -d) (or remove them in the example that made them)", strings.Join(left, ", "))
		}
		return
	}
	// Name the block that failed and show what it printed.
	last, tail := -1, log
	for i := range blocks {
		if j := strings.LastIndex(log, fmt.Sprintf("::docs-test %d\n", i)); j >= 0 {
			last, tail = i, log[j:]
		}
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after 5 minutes: %w", err)
	}
	if last < 0 {
		t.Fatalf("the page's script failed before its first example: %v\n%s", err, log)
	}
	bl := blocks[last]
	what := "failed"
	if strings.Contains(tail, "::docs-test unexpected success") {
		what = "succeeded, but is marked <!-- docs-test: fails -->"
	}
	if ex.box != nil {
		what += " (note: outside HOME, TMPDIR and the working directory the file system is read-only here;" +
			" an example writes its files under $(mktemp -d))"
	}
	t.Fatalf("%s:%d: the example %s (%v):\n%s\n--- its output\n%s", bl.file, bl.line, what, err, bl.text, tail)
}

// pageDirs are the directories of a run: the working directory (clone),
// HOME and TMPDIR, all under root.
type pageDirs struct {
	root, clone, home, tmp string
}

// newPageDirs makes a run's directories: the clone has ./bin/kfa (a link
// to the binary under test), the helpers in bins (name to binary) in
// ./bin too, and a copy of ./samples, so that nothing an example does can
// reach the real clone through them.
func newPageDirs(t *testing.T, ex exampleEnv, bins map[string]string) pageDirs {
	t.Helper()
	root, err := os.MkdirTemp("", "kfa-docs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	d := pageDirs{root: root, clone: filepath.Join(root, "clone"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, dir := range []string{d.home, d.tmp, filepath.Join(d.clone, "bin")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ex.kfa, filepath.Join(d.clone, "bin", "kfa")); err != nil {
		t.Fatal(err)
	}
	for name, bin := range bins {
		if err := os.Symlink(bin, filepath.Join(d.clone, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(d.clone, "samples"), os.DirFS(ex.samples)); err != nil {
		t.Fatal(err)
	}
	return d
}

// pageEnv is the environment of a page's shell: the user's PATH with
// the curl shim first, no KFA_* settings, the page's HOME and TMPDIR.
// The binary is ./bin/kfa, as after `make run`, and not on PATH: an
// example that runs plain `kfa` fails as it would for the reader.
func pageEnv(d pageDirs, shim string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "KFA_") || k == "PATH" || k == "HOME" || k == "TMPDIR" || k == "CDPATH" || k == "BASH_ENV" ||
			k == "XDG_CONFIG_HOME" || k == "XDG_DATA_HOME" || k == "XDG_CACHE_HOME" || k == "XDG_STATE_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PATH="+shim+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+d.home, "TMPDIR="+d.tmp)
}

// kfaServer is a running kfa serve.
type kfaServer struct {
	base string   // http://127.0.0.1:PORT
	env  []string // the KFA_* settings it runs with
	stop func()   // stops it (once; the test's cleanup does it too)
}

// startServer runs kfa serve as `make run` does, on a free port, with its
// data in ./data of the clone and env added, once it listens.
func startServer(t *testing.T, kfa string, d pageDirs, env []string) *kfaServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kfa, "serve", "--addr", addr, "--data", "./data", "--seed-samples", "--search-rate", "0")
	cmd.Dir = d.clone
	cmd.Env = append(pageEnv(d, ""), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	var logs bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), `msg="kfa serving"`) {
				ready <- true
			}
		}
		ready <- false
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-done
			if err := cmd.Wait(); err != nil {
				t.Errorf("kfa serve: %v", err)
			}
			if t.Failed() {
				t.Logf("server log:\n%s", logs.String())
			}
		})
	}
	t.Cleanup(stop)
	if !<-ready {
		t.Fatalf("kfa serve exited before listening")
	}
	return &kfaServer{base: "http://" + addr, env: env, stop: stop}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// docsSecondPort is the port of a server a page starts itself
// (operations.md's HTTPS on your machine, on 127.0.0.1:8443).
const docsSecondPort = "8443"

// secondServerPort puts a port free now in docsSecondPort's place, so
// that pages, and test runs, do not compete for it.
func secondServerPort(t *testing.T) *strings.Replacer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	return strings.NewReplacer("127.0.0.1:"+docsSecondPort, "127.0.0.1:"+port, "localhost:"+docsSecondPort, "localhost:"+port)
}
