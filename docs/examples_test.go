package docs

// The examples test: every ```sh (or bash, shell) block of README.md and
// docs/*.md runs, in page order, in one bash per page, against a real
// kfa serve that the test starts for that page, as a new user would run
// them after `make run`. The conventions (see examples.md):
//
//   - The server is at http://127.0.0.1:8080; the test replaces that URL
//     with its own server's. The working directory is a fresh one with
//     ./bin/kfa (also on PATH as kfa), ./samples and ./data, the server's
//     data directory, which `make run` would have made.
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
	}
	if n < 20 {
		t.Fatalf("only %d shell examples found; is the parser broken?", n)
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
	root := t.TempDir()
	binDir := filepath.Join(root, "bin")
	kfa := filepath.Join(binDir, "kfa")
	build := exec.Command("go", "build", "-o", kfa, "../cmd/kfa")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// curl fails on HTTP errors, so an example that gets one fails here.
	shim := filepath.Join(root, "shim")
	if err := os.MkdirAll(shim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shim, "curl"), []byte("#!/bin/sh\nexec "+tools["curl"]+" --fail-with-body \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	samples, err := filepath.Abs(filepath.Join("..", "samples"))
	if err != nil {
		t.Fatal(err)
	}
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
			runPage(t, kfa, shim, samples, run)
		})
	}
}

// runPage starts a server in a fresh working directory and runs the
// blocks there in one bash.
func runPage(t *testing.T, kfa, shim, samples string, blocks []block) {
	work, err := os.MkdirTemp("", "kfa-docs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	for _, d := range []string{"bin", "tmp"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(kfa, filepath.Join(work, "bin", "kfa")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(samples, filepath.Join(work, "samples")); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, kfa, work)

	var script strings.Builder
	script.WriteString("set -a -euo pipefail\ncd " + shellQuote(work) + "\n")
	for i, bl := range blocks {
		text := strings.ReplaceAll(bl.text, "http://127.0.0.1:8080", base)
		fmt.Fprintf(&script, "echo '::docs-test %d' >&2\n", i)
		if bl.fails {
			// Its own bash, so that errexit holds inside it; set -a above
			// exported the page's variables to it.
			f := filepath.Join(work, "tmp", fmt.Sprintf("block-%d.sh", i))
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
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script.String())
	cmd.Dir = work
	cmd.Env = pageEnv(work, shim)
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
		t.Logf("%d examples ran", len(blocks))
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
	t.Fatalf("%s:%d: the example %s (%v):\n%s\n--- its output\n%s", bl.file, bl.line, what, err, bl.text, tail)
}

// pageEnv is the environment of a page's shell: the user's PATH with
// the curl shim and ./bin first, no KFA_* settings, HOME and TMPDIR
// inside the working directory.
func pageEnv(work, shim string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "KFA_") || k == "PATH" || k == "HOME" || k == "TMPDIR" || k == "CDPATH" || k == "BASH_ENV" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PATH="+shim+string(os.PathListSeparator)+filepath.Join(work, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+work, "TMPDIR="+filepath.Join(work, "tmp"))
}

// startServer runs kfa serve as `make run` does, on a free port, with its
// data in work/data, and returns its base URL once it listens.
func startServer(t *testing.T, kfa, work string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cmd := exec.Command(kfa, "serve", "--addr", addr, "--data", "./data", "--seed-samples", "--search-rate", "0")
	cmd.Dir = work
	cmd.Env = pageEnv(work, "")
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
