package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[1] != "test" {
		fmt.Fprintln(stderr, "usage: testsum go test [flags] [packages]")
		return 2
	}
	cmdArgs := append([]string{"test", "-json"}, args[2:]...)
	cmd := exec.Command(args[0], cmdArgs...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	s := newSummary(stdout)
	s.read(out)
	werr := cmd.Wait()
	s.finish(stdout, time.Since(start))
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		return ee.ExitCode()
	case werr != nil:
		fmt.Fprintln(stderr, "testsum:", werr)
		return 1
	}
	return 0
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string // build-output and build-fail events
}

// summary folds the event stream into per-package lines and counts.
type summary struct {
	w                         io.Writer
	passed, failed, skipped   int
	pkgOK, pkgFailed, pkgNone int
	output                    map[string][]string // package+test -> its output lines, until it ends
	skips                     []string
	failures                  []string
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, output: map[string][]string{}}
}

func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintln(s.w, string(line)) // not an event: pass it through
			continue
		}
		s.event(ev)
	}
}

func (s *summary) event(ev event) {
	key := ev.Package + "\x00" + ev.Test
	switch ev.Action {
	case "build-output":
		fmt.Fprint(s.w, ev.Output)
	case "output":
		s.output[key] = append(s.output[key], ev.Output)
	case "pass", "fail", "skip":
		out := s.output[key]
		delete(s.output, key)
		if ev.Test == "" {
			s.packageDone(ev, out)
			return
		}
		switch ev.Action {
		case "pass":
			s.passed++
		case "fail":
			s.failed++
			s.failures = append(s.failures, ev.Package+" "+ev.Test)
			// Subtests' lines are part of the parent's output too: print
			// each failure's own lines once, innermost first.
			for _, l := range out {
				fmt.Fprint(s.w, l)
			}
		case "skip":
			s.skipped++
			s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", ev.Package, ev.Test, skipReason(out)))
		}
	}
}

// packageDone prints go test's own line for a package: ok, FAIL or no
// test files.
func (s *summary) packageDone(ev event, out []string) {
	for _, l := range out {
		// The package's own lines are go test's: "ok  \tpkg\t1.2s",
		// "FAIL\tpkg", "?   \tpkg\t[no test files]", and what a test
		// binary printed outside any test (a panic, TestMain).
		if strings.HasPrefix(l, "PASS\n") || l == "PASS\n" {
			continue
		}
		fmt.Fprint(s.w, l)
	}
	switch {
	case ev.Action == "fail":
		s.pkgFailed++
		s.unfinished(ev.Package)
	case ev.Action == "skip" || slices.ContainsFunc(out, func(l string) bool { return strings.Contains(l, "[no test files]") }):
		s.pkgNone++
	default:
		s.pkgOK++
	}
}

// unfinished prints the output of the tests of a failed package that
// never ended (the binary panicked, timed out or was killed while they
// ran), which would otherwise be lost, and lists the package among the
// failures when none of its tests was reported as failed: a failure must
// never show only as a count.
func (s *summary) unfinished(pkg string) {
	prefix := pkg + "\x00"
	var keys []string
	for k := range s.output {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		test := strings.TrimPrefix(k, prefix)
		fmt.Fprintf(s.w, "--- %s did not finish; its output:\n", test)
		for _, l := range s.output[k] {
			fmt.Fprint(s.w, l)
		}
		delete(s.output, k)
		s.failures = append(s.failures, pkg+" "+test+" (did not finish)")
	}
	if !slices.ContainsFunc(s.failures, func(f string) bool { return strings.HasPrefix(f, pkg+" ") }) {
		s.failures = append(s.failures, pkg+" (outside any test: see the package's output above)")
	}
}

// skipReason is the message of a t.Skip: the test's last output line
// that is not the "--- SKIP" line itself.
func skipReason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		l := strings.TrimSpace(out[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		// "file_test.go:12: reason"
		if i := strings.Index(l, ".go:"); i >= 0 {
			if j := strings.Index(l[i+4:], ": "); j >= 0 {
				return l[i+4+j+2:]
			}
		}
		return l
	}
	return "(no reason given)"
}

func (s *summary) finish(w io.Writer, took time.Duration) {
	if len(s.skips) > 0 {
		sort.Strings(s.skips)
		fmt.Fprintf(w, "\nSkipped:\n")
		for _, l := range s.skips {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if len(s.failures) > 0 {
		fmt.Fprintf(w, "\nFailed:\n")
		for _, l := range s.failures {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, "\npackages: %d ok, %d failed, %d without tests (%s)\n", s.pkgOK, s.pkgFailed, s.pkgNone, took.Round(time.Second))
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
}
