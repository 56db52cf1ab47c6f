package docs

// The examples test: every ```sh (or bash, shell) block of README.md and
// docs/*.md runs, in page order, in one bash per page, against a real
// kfa serve that the test starts for that page, as a new user would run
// them after `make run`. The conventions (see examples.md):
//
//   - The server is at http://127.0.0.1:8080; the test replaces that URL
//     with its own server's. The working directory stands for the top of
//     the clone: a fresh one with ./bin/kfa (not on PATH: the examples
//     call it ./bin/kfa, as a reader can after `make run`), ./samples and
//     ./data, the server's data directory, which `make run` would have
//     made. HOME and TMPDIR are fresh directories beside it.
//   - An example writes only into HOME, TMPDIR and ./data: a file it
//     leaves in the working directory would be left in the reader's clone
//     (write it under $(mktemp -d)), and where the kernel allows it
//     (sandbox_test.go) the rest of the file system is read-only, so an
//     example that writes elsewhere (/tmp/kfa.jar) fails.
//   - Blocks of one page share one shell: a variable set in one block
//     (ALICE=..., TASK=...) is there in the next. Pages do not share.
//   - Each block runs with `set -euo pipefail`, and curl fails on an HTTP
//     error (it is run with --fail-with-body), so an example that answers
//     an error fails the test.
//   - A block that must not run has, on the line before its fence,
//     <!-- docs-test: skip: REASON -->, and the reason is required.
//   - A block that shows an error has <!-- docs-test: fails --> and must
//     exit non-zero. It runs in its own shell; what it sets is not kept.
//   - Other fences (json, text, plain ```) are output and synopses, and
//     never run.
//   - A page that starts its server with the gRPC binding on
//     (<!-- docs-test: serve-env: KFA_GRPC_ADDR=127.0.0.1:9090 -->) gets
//     a free port in its place, in its examples too, and grpcurl on PATH
//     (installed once, at a pinned version, from the Go module proxy).

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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/testbin"
)

// block is one fenced shell example.
type block struct {
	file  string // as shown in failures: README.md, docs/api.md
	line  int    // of the opening fence
	text  string
	skip  string // the reason, when marked skip
	fails bool
}

var (
	fenceOpen = regexp.MustCompile("^```([A-Za-z0-9_-]*)")
	marker    = regexp.MustCompile(`^<!--\s*docs-test:\s*(.*?)\s*-->$`)
)

// shellLangs are the fence languages that run.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true}

// parseBlocks reads the shell blocks of a Markdown page.
func parseBlocks(name, text string) ([]block, error) {
	var (
		out    []block
		cur    *block
		inside bool
		prev   string // the last line before a fence
	)
	for i, line := range strings.Split(text, "\n") {
		if inside {
			if strings.HasPrefix(line, "```") {
				inside = false
				if cur != nil {
					out = append(out, *cur)
					cur = nil
				}
				prev = ""
				continue
			}
			if cur != nil {
				cur.text += line + "\n"
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			inside = true
			mk := marker.FindStringSubmatch(strings.TrimSpace(prev))
			if !shellLangs[m[1]] {
				if mk != nil {
					return nil, fmt.Errorf("%s:%d: a docs-test marker on a %q block, which never runs", name, i+1, m[1])
				}
				continue
			}
			cur = &block{file: name, line: i + 1}
			if mk != nil {
				switch directive := mk[1]; {
				case strings.HasPrefix(directive, "serve-env:"):
					// A page marker (see serveEnv), not the block's.
				case directive == "fails":
					cur.fails = true
				case strings.HasPrefix(directive, "skip:") && strings.TrimSpace(strings.TrimPrefix(directive, "skip:")) != "":
					cur.skip = strings.TrimSpace(strings.TrimPrefix(directive, "skip:"))
				default:
					return nil, fmt.Errorf("%s:%d: unknown docs-test marker %q (want \"skip: REASON\" or \"fails\")", name, i, directive)
				}
			}
			continue
		}
		if marker.MatchString(strings.TrimSpace(line)) || strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if inside {
		return nil, fmt.Errorf("%s: a fence is not closed", name)
	}
	return out, nil
}

// serveEnvMarker is a page's marker that its server runs with more
// environment, because the page tells the reader to start it so
// (`KFA_PUSH_ALLOW=localhost,127.0.0.1 make run`): <!-- docs-test:
// serve-env: KFA_NAME=value ... --> on a line of its own.
var serveEnvMarker = regexp.MustCompile(`^<!--\s*docs-test:\s*serve-env:\s*(.*?)\s*-->$`)

// serveEnv returns the variables of a page's serve-env markers.
func serveEnv(text string) ([]string, error) {
	var env []string
	for _, l := range strings.Split(text, "\n") {
		m := serveEnvMarker.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		for _, kv := range strings.Fields(m[1]) {
			if k, _, ok := strings.Cut(kv, "="); !ok || !strings.HasPrefix(k, "KFA_") {
				return nil, fmt.Errorf("serve-env: %q is not KFA_NAME=value", kv)
			}
			env = append(env, kv)
		}
	}
	return env, nil
}

// helperCommands are the programs of this repository that examples run
// from ./bin besides kfa, built as the page says to (go build -o bin/...).
var helperCommands = map[string]string{
	"pushreceiver": "github.com/kfa-project/kfa/docs/pushreceiver/cmd/pushreceiver",
}

// helpers builds the helper commands the blocks run, by name.
func helpers(t *testing.T, blocks []block) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, pkg := range helperCommands {
		for _, bl := range blocks {
			if strings.Contains(bl.text, "./bin/"+name) {
				out[name] = testbin.Command(t, pkg)
				break
			}
		}
	}
	return out
}

// pages are the Markdown files whose examples run, by their display name.
func pages(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{"README.md": filepath.Join("..", "README.md")}
	mds, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mds {
		files["docs/"+m] = m
	}
	return files
}

// TestExamplesParse: markers are well formed on every page. It needs no
// tools, so it runs even where the examples cannot.
func TestExamplesParse(t *testing.T) {
	n := 0
	for name, path := range pages(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseBlocks(name, string(b))
		if err != nil {
			t.Error(err)
		}
		n += len(blocks)
		for _, bl := range blocks {
			for _, l := range plainKFA(bl.text) {
				t.Errorf("%s:%d: the example runs plain kfa (%q); every example runs ./bin/kfa, which a reader has after make run",
					bl.file, bl.line+1+l.n, l.text)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d shell examples found; is the parser broken?", n)
	}
}

// commandKFA is kfa in a command's place: at the start of a line, after
// a pipe, a list operator or a command substitution, or after xargs or
// time.
var commandKFA = regexp.MustCompile(`(?:^|[|;&(]|\$\(|\bxargs|\btime)\s*kfa(?:\s|$)`)

// line is a line of a block, numbered from 0.
type line struct {
	n    int
	text string
}

// plainKFA returns the lines of a shell example that run `kfa` from PATH
// rather than ./bin/kfa; comments are prose.
func plainKFA(text string) []line {
	var out []line
	for i, l := range strings.Split(text, "\n") {
		code := l
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if j := strings.Index(code, " #"); j >= 0 {
			code = code[:j]
		}
		if commandKFA.MatchString(code) {
			out = append(out, line{i, strings.TrimSpace(l)})
		}
	}
	return out
}

func TestPlainKFA(t *testing.T) {
	text := "./bin/kfa agent list\nkfa stats\nA=$(kfa agent create --json)\n# kfa answers 303\n" +
		"echo x | kfa records import -\ndocker compose exec kfa kfa version\n./bin/kfa check  # kfa; ok\n  kfa version\n"
	var got []int
	for _, l := range plainKFA(text) {
		got = append(got, l.n)
	}
	if fmt.Sprint(got) != "[1 2 4 7]" {
		t.Fatalf("plain kfa on lines %v, want [1 2 4 7]", got)
	}
}

func TestServeEnv(t *testing.T) {
	env, err := serveEnv("prose\n<!-- docs-test: serve-env: KFA_PUSH_ALLOW=localhost,127.0.0.1 KFA_WEB=false -->\n\n```sh\nx\n```\n")
	if err != nil || fmt.Sprint(env) != "[KFA_PUSH_ALLOW=localhost,127.0.0.1 KFA_WEB=false]" {
		t.Fatalf("serveEnv: %q %v", env, err)
	}
	if _, err := serveEnv("<!-- docs-test: serve-env: PATH=/tmp -->\n"); err == nil {
		t.Fatal("a variable other than KFA_* was taken")
	}
}

func TestParseBlocks(t *testing.T) {
	page := "intro\n```sh\necho one\n```\n\n<!-- docs-test: skip: needs root -->\n```bash\nsudo x\n```\n" +
		"<!-- docs-test: fails -->\n```sh\nfalse\n```\n```json\n{}\n```\n```\nkfa serve [flags]\n```\n"
	got, err := parseBlocks("p.md", page)
	if err != nil {
		t.Fatal(err)
	}
	want := []block{
		{file: "p.md", line: 2, text: "echo one\n"},
		{file: "p.md", line: 7, text: "sudo x\n", skip: "needs root"},
		{file: "p.md", line: 11, text: "false\n", fails: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{
		"<!-- docs-test: skip -->\n```sh\nx\n```\n",
		"<!-- docs-test: skip:   -->\n```sh\nx\n```\n",
		"<!-- docs-test: sometimes -->\n```sh\nx\n```\n",
		"<!-- docs-test: skip: output -->\n```json\n{}\n```\n",
		"```sh\nnot closed\n",
	} {
		if _, err := parseBlocks("bad.md", bad); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// TestExamples runs the examples of each page against its own server.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kfa and runs every example against a server")
	}
	tools := map[string]string{}
	for _, tool := range []string{"bash", "curl", "jq"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; CI must install it (.ci/run installs jq and curl)", tool)
			}
			t.Skipf("the docs examples need %s: install it (apt-get install %s) to run them", tool, tool)
		}
		tools[tool] = p
	}
	kfa := testbin.KFA(t)
	root := t.TempDir()
	// curl fails on HTTP errors, so an example that gets one fails here.
	shim := filepath.Join(root, "shim")
	if err := os.MkdirAll(shim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shim, "curl"), []byte("#!/bin/sh\nexec "+tools["curl"]+" --fail-with-body \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join("..", "samples")
	box := sandbox(t)
	for name, path := range pages(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseBlocks(name, string(b))
		if err != nil {
			t.Fatal(err)
		}
		var run []block
		for _, bl := range blocks {
			if bl.skip == "" {
				run = append(run, bl)
			}
		}
		if len(run) == 0 {
			continue // a page of prose and output only
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, err := serveEnv(string(b))
			if err != nil {
				t.Fatal(err)
			}
			env, extra := grpcPage(t, env)
			runPage(t, kfa, shim, samples, box, env, helpers(t, run), run, extra)
		})
	}
}

// runPage starts a server in a fresh working directory and runs the
// blocks there in one bash.
func runPage(t *testing.T, kfa, shim, samples string, box *sandboxCmd, env []string, bins map[string]string, blocks []block, extra pageExtras) {
	d := newPageDirs(t, kfa, samples, bins)
	work := d.clone
	before, err := snapshot(work)
	if err != nil {
		t.Fatal(err)
	}
	base := startServer(t, kfa, d, env)

	var script strings.Builder
	script.WriteString("set -a -euo pipefail\ncd " + shellQuote(work) + "\n")
	for i, bl := range blocks {
		text := strings.ReplaceAll(bl.text, "http://127.0.0.1:8080", base)
		if len(extra.repl) > 0 {
			text = strings.NewReplacer(extra.repl...).Replace(text)
		}
		fmt.Fprintf(&script, "echo '::docs-test %d' >&2\n", i)
		if bl.fails {
			// Its own bash, so that errexit holds inside it; set -a above
			// exported the page's variables to it.
			f := filepath.Join(d.tmp, fmt.Sprintf("block-%d.sh", i))
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&script, "if bash -euo pipefail %s; then echo '::docs-test unexpected success' >&2; exit 1; fi\n", shellQuote(f))
			continue
		}
		script.WriteString(text)
	}
	script.WriteString("echo '::docs-test done' >&2\n")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hung example, not a slow one
	defer cancel()
	cmd := box.command(ctx, d.root, script.String())
	cmd.Dir = work
	cmd.Env = pageEnv(d, shim)
	if extra.path != "" {
		// Tools from outside the clone go on PATH, as installed ones
		// would be.
		cmd.Env = append(cmd.Env, "PATH="+extra.path+string(os.PathListSeparator)+shim+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	log := out.String()
	if err == nil && strings.HasSuffix(log, "::docs-test done\n") {
		if testing.Verbose() {
			t.Logf("output:\n%s", log)
		}
		t.Logf("%d examples ran%s", len(blocks), box.note())
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
	if box != nil {
		what += " (note: outside HOME, TMPDIR and the working directory the file system is read-only here;" +
			" an example writes its files under $(mktemp -d))"
	}
	t.Fatalf("%s:%d: the example %s (%v):\n%s\n--- its output\n%s", bl.file, bl.line, what, err, bl.text, tail)
}

// pageDirs are the directories of one page's run: the working directory
// (clone), HOME and TMPDIR, all under root.
type pageDirs struct {
	root, clone, home, tmp string
}

// newPageDirs makes a page's directories: the clone has ./bin/kfa (a link
// to the binary under test), the helpers in bins (name to binary) in
// ./bin too, and a copy of ./samples, so that nothing an example does can
// reach the real clone through them.
func newPageDirs(t *testing.T, kfa, samples string, bins map[string]string) pageDirs {
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
	if err := os.Symlink(kfa, filepath.Join(d.clone, "bin", "kfa")); err != nil {
		t.Fatal(err)
	}
	for name, bin := range bins {
		if err := os.Symlink(bin, filepath.Join(d.clone, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(d.clone, "samples"), os.DirFS(samples)); err != nil {
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

// startServer runs kfa serve as `make run` does, on a free port, with its
// data in ./data of the page's clone, and returns its base URL once it
// listens.
func startServer(t *testing.T, kfa string, d pageDirs, env []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
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
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	if !<-ready {
		t.Fatalf("kfa serve exited before listening")
	}
	return "http://" + addr
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
