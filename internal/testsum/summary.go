package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string // build-output and build-fail events
}

// skip is a skipped test and why.
type skip struct {
	pkg, test, reason string
}

// summary folds the event stream into per-package lines and counts.
type summary struct {
	now   func() time.Time
	start time.Time

	mu                        sync.Mutex // the writer and everything below
	w                         io.Writer
	last                      time.Time // when something was last printed
	passed, failed, skipped   int
	pkgOK, pkgFailed, pkgNone int
	running                   map[string]time.Time // packages whose tests run, since when
	output                    map[string][]string  // package+test -> its output lines, until it ends
	skips                     []skip
	failures                  []string
}

func newSummary(w io.Writer, now func() time.Time) *summary {
	t := now()
	return &summary{w: w, now: now, start: t, last: t, running: map[string]time.Time{}, output: map[string][]string{}}
}

func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		s.mu.Lock()
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			s.print(string(line) + "\n") // not an event: pass it through
		} else {
			s.event(ev)
		}
		s.mu.Unlock()
	}
}

// print writes text and notes the time, so that heartbeats only fill
// silences.
func (s *summary) print(text string) {
	fmt.Fprint(s.w, text)
	s.last = s.now()
}

func (s *summary) event(ev event) {
	key := ev.Package + "\x00" + ev.Test
	switch ev.Action {
	case "build-output":
		s.print(ev.Output)
	case "start":
		s.running[ev.Package] = s.now()
	case "output":
		s.output[key] = append(s.output[key], ev.Output)
	case "pass", "fail", "skip":
		out := s.output[key]
		delete(s.output, key)
		if ev.Test == "" {
			delete(s.running, ev.Package)
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
			s.print(strings.Join(out, ""))
		case "skip":
			s.skipped++
			s.skips = append(s.skips, skip{ev.Package, ev.Test, skipReason(out)})
		}
	}
}

// packageDone prints go test's own line for a package (ok, FAIL or no
// test files) as the package finishes, after the wall time so far: that
// is the run's progress.
func (s *summary) packageDone(ev event, out []string) {
	var b strings.Builder
	for _, l := range out {
		// The package's own lines are go test's: "ok  \tpkg\t1.2s",
		// "FAIL\tpkg", "?   \tpkg\t[no test files]", and what a test
		// binary printed outside any test (a panic, TestMain).
		if l == "PASS\n" {
			continue
		}
		if strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   \t") {
			l = clock(s.now().Sub(s.start)) + " " + l
		}
		b.WriteString(l)
	}
	s.print(b.String())
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

// clock is a wall time as [m:ss].
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("[%d:%02d]", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// heartbeats calls beat at each tick until the returned func is called.
func (s *summary) heartbeats(tick <-chan time.Time, quiet time.Duration) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			case <-tick:
				s.beat(quiet)
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// beat says, after quiet of silence, what is still running: the packages
// whose tests run and for how long, or, before any runs, that go test is
// still compiling. Without it a first run, which compiles every package
// with the race detector, looks hung for minutes.
func (s *summary) beat(quiet time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.now().Sub(s.last) >= quiet {
		s.print(s.stillRunning())
	}
}

// stillRunning is the heartbeat line. The caller holds mu.
func (s *summary) stillRunning() string {
	now := s.now()
	at := clock(now.Sub(s.start))
	if len(s.running) == 0 {
		if s.pkgOK+s.pkgFailed+s.pkgNone == 0 {
			return at + " compiling the tests (a first run builds every package with the race detector: minutes; later runs reuse the build cache)\n"
		}
		return at + " compiling and linking the next test binaries\n"
	}
	pkgs := make([]string, 0, len(s.running))
	for p := range s.running {
		pkgs = append(pkgs, p)
	}
	// Longest running first: that is what the wait is for.
	sort.Slice(pkgs, func(i, j int) bool {
		if a, b := s.running[pkgs[i]], s.running[pkgs[j]]; !a.Equal(b) {
			return a.Before(b)
		}
		return pkgs[i] < pkgs[j]
	})
	parts := make([]string, len(pkgs))
	for i, p := range pkgs {
		parts[i] = fmt.Sprintf("%s (%s)", p, now.Sub(s.running[p]).Round(time.Second))
	}
	return at + " still running: " + strings.Join(parts, ", ") + "\n"
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
		s.print(fmt.Sprintf("--- %s did not finish; its output:\n%s", test, strings.Join(s.output[k], "")))
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.skips) > 0 {
		fmt.Fprintf(w, "\nSkipped:\n")
		for _, l := range foldSkips(s.skips) {
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

// foldSkips lists the skipped tests, one line per reason: a reason that
// many tests give (a missing database) is one line with the count and
// where, so that a reason given once is not lost among them. The reasons
// most tests give come first, then the tests skipped alone.
func foldSkips(skips []skip) []string {
	byReason := map[string][]skip{}
	for _, sk := range skips {
		byReason[sk.reason] = append(byReason[sk.reason], sk)
	}
	reasons := slices.Collect(maps.Keys(byReason))
	slices.SortFunc(reasons, func(a, b string) int {
		if na, nb := len(byReason[a]), len(byReason[b]); na != nb {
			return nb - na
		}
		ga, gb := byReason[a][0], byReason[b][0]
		return cmp.Or(strings.Compare(ga.pkg, gb.pkg), strings.Compare(ga.test, gb.test), strings.Compare(a, b))
	})
	out := make([]string, 0, len(reasons))
	for _, reason := range reasons {
		group := byReason[reason]
		if len(group) == 1 {
			out = append(out, fmt.Sprintf("%s %s: %s", group[0].pkg, group[0].test, reason))
			continue
		}
		perPkg := map[string]int{}
		for _, sk := range group {
			perPkg[sk.pkg]++
		}
		var where []string
		for _, p := range slices.Sorted(maps.Keys(perPkg)) {
			where = append(where, fmt.Sprintf("%s (%d)", p, perPkg[p]))
		}
		out = append(out, fmt.Sprintf("%d tests in %s: %s", len(group), strings.Join(where, ", "), reason))
	}
	return out
}
