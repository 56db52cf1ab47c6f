package docs

// The examples test: every ```sh (or bash, shell) block of README.md and
// docs/*.md runs, in page order, in one bash per page, against a real
// kfa serve, as a new user would run them after `make run`: once on a
// server of the page's own, and once with every page in reading order on
// one server (examples_run_test.go). The conventions (see examples.md):
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
//   - A page that starts a server of its own (operations.md's HTTPS)
//     starts it on 127.0.0.1:8443; the test puts a free port in the
//     place of 127.0.0.1:8443 and localhost:8443.
//   - Blocks of one page share one shell: a variable set in one block
//     (ALICE=..., TASK=...) is there in the next. Pages do not share,
//     but in the sequence they share the server: a page names its agents
//     after itself (alice-api), since a name is taken once.
//   - Every wait loop has a bound and fails saying why.
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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
			for _, l := range unboundedWaits(bl.text) {
				t.Errorf("%s:%d: an unbounded wait (%q): a loop waits at most so long and then fails saying why "+
					"(for _ in $(seq 50); do ... && break; sleep 0.2; done; see examples.md)", bl.file, bl.line+1+l.n, l.text)
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

// unboundedLoop is a shell loop that runs until something happens:
// until ..., while ... (for loops over a range, and while read over a
// file, are bounded).
var unboundedLoop = regexp.MustCompile(`(?:^|[;&|]\s*|\bdo\s+)(?:until|while)\s`)

// readLoop reads lines: it ends with its input.
var readLoop = regexp.MustCompile(`\bwhile\s+(?:IFS=\S*\s+)?read\b`)

// unboundedWaits returns the lines of a shell example that loop until
// something happens, which never ends when it never happens.
func unboundedWaits(text string) []line {
	var out []line
	for i, l := range strings.Split(text, "\n") {
		code := strings.TrimSpace(l)
		if strings.HasPrefix(code, "#") {
			continue
		}
		if unboundedLoop.MatchString(code) && !readLoop.MatchString(code) {
			out = append(out, line{i, code})
		}
	}
	return out
}

func TestUnboundedWaits(t *testing.T) {
	text := "until grep -q x f; do sleep 0.2; done\nfor _ in $(seq 50); do grep -q x f && break; sleep 0.2; done\n" +
		"# until the server answers\nwhile true; do curl x; done\ntrue && while read -r l; do :; done < f\necho until then\n"
	var got []int
	for _, l := range unboundedWaits(text) {
		got = append(got, l.n)
	}
	if fmt.Sprint(got) != "[0 3]" {
		t.Fatalf("unbounded waits on lines %v, want [0 3]", got)
	}
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
