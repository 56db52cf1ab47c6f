package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// stream is a recorded `go test -json` run: one package passing with a
// skip, one failing in a subtest, one without tests, one not building.
const stream = `{"Action":"start","Package":"example/a"}
{"Action":"run","Package":"example/a","Test":"TestOK"}
{"Action":"output","Package":"example/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"example/a","Test":"TestOK","Elapsed":0}
{"Action":"output","Package":"example/a","Test":"TestBrowser","Output":"    a_test.go:12: needs Chromium: install chromium\n"}
{"Action":"output","Package":"example/a","Test":"TestBrowser","Output":"--- SKIP: TestBrowser (0.00s)\n"}
{"Action":"skip","Package":"example/a","Test":"TestBrowser","Elapsed":0}
{"Action":"output","Package":"example/a","Output":"PASS\n"}
{"Action":"output","Package":"example/a","Output":"ok  \texample/a\t0.01s\n"}
{"Action":"pass","Package":"example/a","Elapsed":0.01}
{"Action":"output","Package":"example/b","Test":"TestT/sub","Output":"    b_test.go:7: got 1, want 2\n"}
{"Action":"output","Package":"example/b","Test":"TestT/sub","Output":"    --- FAIL: TestT/sub (0.00s)\n"}
{"Action":"fail","Package":"example/b","Test":"TestT/sub","Elapsed":0}
{"Action":"output","Package":"example/b","Test":"TestT","Output":"--- FAIL: TestT (0.00s)\n"}
{"Action":"fail","Package":"example/b","Test":"TestT","Elapsed":0}
{"Action":"output","Package":"example/b","Output":"FAIL\texample/b\t0.02s\n"}
{"Action":"fail","Package":"example/b","Elapsed":0.02}
{"Action":"output","Package":"example/c","Output":"?   \texample/c\t[no test files]\n"}
{"Action":"skip","Package":"example/c","Elapsed":0}
{"ImportPath":"example/d","Action":"build-output","Output":"# example/d\n"}
{"ImportPath":"example/d","Action":"build-output","Output":"d.go:3:1: syntax error\n"}
{"Action":"output","Package":"example/d","Output":"FAIL\texample/d [build failed]\n"}
{"Action":"fail","Package":"example/d","Elapsed":0}
`

// TestUnfinished: a package whose binary dies while a test runs, and one
// that fails outside any test, both show up under Failed with their
// output, not only as a count.
func TestUnfinished(t *testing.T) {
	const died = `{"Action":"run","Package":"example/e","Test":"TestHang"}
{"Action":"output","Package":"example/e","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"example/e","Test":"TestHang","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"example/e","Output":"FAIL\texample/e\t600.01s\n"}
{"Action":"fail","Package":"example/e","Elapsed":600}
{"Action":"output","Package":"example/f","Output":"TestMain: cannot start the server\n"}
{"Action":"output","Package":"example/f","Output":"FAIL\texample/f\t0.1s\n"}
{"Action":"fail","Package":"example/f","Elapsed":0.1}
`
	var out bytes.Buffer
	s := newSummary(&out, time.Now)
	s.read(strings.NewReader(died))
	s.finish(&out, 0)
	got := out.String()
	for _, want := range []string{
		"--- TestHang did not finish; its output:\n=== RUN   TestHang\npanic: test timed out after 10m0s\n",
		"TestMain: cannot start the server\n",
		"Failed:\n  example/e TestHang (did not finish)\n  example/f (outside any test: see the package's output above)\n",
		"packages: 0 ok, 2 failed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	s := newSummary(&out, time.Now)
	s.read(strings.NewReader(stream))
	s.finish(&out, 0)
	got := out.String()
	for _, want := range []string{
		"ok  \texample/a\t0.01s\n",
		"    b_test.go:7: got 1, want 2\n",
		"FAIL\texample/b\t0.02s\n",
		"?   \texample/c\t[no test files]\n",
		"# example/d\nd.go:3:1: syntax error\n",
		"FAIL\texample/d [build failed]\n",
		"Skipped:\n  example/a TestBrowser: needs Chromium: install chromium\n",
		"Failed:\n  example/b TestT/sub\n  example/b TestT\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "\npackages: 1 ok, 2 failed, 1 without tests (0s)\ntests: 1 passed, 2 failed, 1 skipped\n") {
		t.Errorf("the summary is not the last lines:\n%s", got)
	}
	if strings.Contains(got, "PASS\n") && !strings.Contains(got, "--- PASS") {
		t.Errorf("a bare PASS line was printed:\n%s", got)
	}
}

// TestExitStatus: testsum exits as go test did, so make test fails when a
// test fails. The test binary stands in for the go command.
func TestExitStatus(t *testing.T) {
	for _, code := range []int{0, 1, 2} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			t.Setenv("TESTSUM_FAKE_GO", fmt.Sprint(code))
			var out, errb bytes.Buffer
			got := run([]string{os.Args[0], "test", "./..."}, os.Getenv, &out, &errb)
			if got != code || !strings.Contains(out.String(), "ok  \texample/a\t0.01s\n") {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", got, code, out.String(), errb.String())
			}
		})
	}
	if got := run([]string{"go", "vet"}, os.Getenv, &bytes.Buffer{}, &bytes.Buffer{}); got != 2 {
		t.Fatalf("not a go test command: exit %d, want 2", got)
	}
}

// TestMain makes the test binary a fake `go test -json` when
// TESTSUM_FAKE_GO is set: it prints the recorded stream and exits with
// that status.
func TestMain(m *testing.M) {
	if code := os.Getenv("TESTSUM_FAKE_GO"); code != "" {
		if len(os.Args) < 3 || os.Args[1] != "test" || os.Args[2] != "-json" {
			fmt.Fprintf(os.Stderr, "fake go: want test -json, got %q\n", os.Args[1:])
			os.Exit(3)
		}
		fmt.Print(stream)
		for _, k := range strings.Fields(os.Getenv("TESTSUM_FAKE_ENV")) {
			fmt.Printf("fake go: %s=%s\n", k, os.Getenv(k))
		}
		var n int
		fmt.Sscan(code, &n)
		os.Exit(n)
	}
	os.Exit(m.Run())
}

// TestPostgres: make test-postgres (testsum -postgres) fails at once,
// saying how to start a server, when KFA_TEST_POSTGRES is unset, not a
// URL, or names a port nothing listens on; it never passes by skipping
// every PostgreSQL test. With a server that answers, the tests run with
// every e2e server on PostgreSQL and skipping for want of it forbidden.
func TestPostgres(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	_ = closed.Close()

	t.Setenv("TESTSUM_FAKE_GO", "0")
	t.Setenv("TESTSUM_FAKE_ENV", "KFA_E2E_STORE KFA_REQUIRE_POSTGRES")
	for _, tc := range []struct {
		name, url string
		code      int
		want      string
	}{
		{"unset", "", 2, "KFA_TEST_POSTGRES is not set"},
		{"not a URL", "host=localhost", 2, "not a postgres://"},
		{"nothing listens", "postgres://u:secret@" + deadAddr + "/postgres", 2, "no PostgreSQL server answers at " + deadAddr},
		{"a server answers", "postgres://u:secret@" + ln.Addr().String() + "/postgres", 0,
			"fake go: KFA_E2E_STORE=postgres\nfake go: KFA_REQUIRE_POSTGRES=1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "KFA_TEST_POSTGRES" {
					return tc.url
				}
				return ""
			}
			var out, errb bytes.Buffer
			got := run([]string{"-postgres", os.Args[0], "test", "./e2e/"}, getenv, &out, &errb)
			all := out.String() + errb.String()
			if got != tc.code || !strings.Contains(all, tc.want) {
				t.Fatalf("exit %d, want %d, and output with %q:\n%s", got, tc.code, tc.want, all)
			}
			if tc.code != 0 {
				if !strings.Contains(all, `.ci/postgres.sh start "$dir"`) {
					t.Errorf("the refusal does not say how to start a server:\n%s", all)
				}
				if out.Len() > 0 {
					t.Errorf("go test ran although there is no server:\n%s", out.String())
				}
			}
			if strings.Contains(all, "secret") {
				t.Errorf("the output shows the URL's password:\n%s", all)
			}
		})
	}
}

// TestSkipsFold: a reason many tests give is one line with their count
// and packages, first; a reason given once keeps its test's name.
func TestSkipsFold(t *testing.T) {
	var stream strings.Builder
	skipEv := func(pkg, test, reason string) {
		fmt.Fprintf(&stream, `{"Action":"output","Package":%q,"Test":%q,"Output":"    x_test.go:9: %s\n"}`+"\n", pkg, test, reason)
		fmt.Fprintf(&stream, `{"Action":"skip","Package":%q,"Test":%q}`+"\n", pkg, test)
	}
	for i := range 3 {
		skipEv("example/pg", fmt.Sprintf("TestPG%d", i), "KFA_TEST_POSTGRES is not set")
	}
	skipEv("example/e2e", "TestPG", "KFA_TEST_POSTGRES is not set")
	skipEv("example/big", "TestBig", "set KFA_BIG=1")
	var out bytes.Buffer
	s := newSummary(&out, time.Now)
	s.read(strings.NewReader(stream.String()))
	s.finish(&out, 0)
	want := "Skipped:\n" +
		"  4 tests in example/e2e (1), example/pg (3): KFA_TEST_POSTGRES is not set\n" +
		"  example/big TestBig: set KFA_BIG=1\n"
	if got := out.String(); !strings.Contains(got, want) || !strings.Contains(got, "tests: 0 passed, 0 failed, 5 skipped") {
		t.Fatalf("output:\n%s\nwant it to hold:\n%s", got, want)
	}
}

// clockAt is a clock that tests move by hand.
type clockAt struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clockAt) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clockAt) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestProgress: each package's line is printed as it finishes, after the
// wall time so far; after a silence a heartbeat says what is still
// compiling or running, and nothing is said while output flows.
func TestProgress(t *testing.T) {
	c := &clockAt{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	s := newSummary(&out, c.now)
	send := func(lines ...string) { s.read(strings.NewReader(strings.Join(lines, "\n") + "\n")) }
	const quiet = 30 * time.Second
	c.add(10 * time.Second)
	s.beat(quiet) // 10 s of silence: nothing said
	c.add(25 * time.Second)
	s.beat(quiet)
	send(`{"Action":"start","Package":"example/slow"}`, `{"Action":"start","Package":"example/a"}`)
	c.add(30 * time.Second)
	send(`{"Action":"output","Package":"example/a","Output":"ok  \texample/a\t0.5s\n"}`,
		`{"Action":"pass","Package":"example/a","Elapsed":0.5}`)
	s.beat(quiet) // example/a just printed: quiet
	c.add(40 * time.Second)
	s.beat(quiet)
	c.add(20 * time.Second)
	send(`{"Action":"output","Package":"example/slow","Output":"ok  \texample/slow\t90s\n"}`,
		`{"Action":"pass","Package":"example/slow","Elapsed":90}`)
	want := "[0:35] compiling the tests (a first run builds every package with the race detector: minutes; later runs reuse the build cache)\n" +
		"[1:05] ok  \texample/a\t0.5s\n" +
		"[1:45] still running: example/slow (1m10s)\n" +
		"[2:05] ok  \texample/slow\t90s\n"
	if got := out.String(); got != want {
		t.Fatalf("output:\n%s\nwant:\n%s", got, want)
	}

	// The loop beats at each tick and stops when told.
	tick := make(chan time.Time)
	stop := s.heartbeats(tick, quiet)
	c.add(time.Minute)
	tick <- time.Time{}
	stop()
	if got := out.String(); !strings.HasSuffix(got, "[3:05] compiling and linking the next test binaries\n") {
		t.Fatalf("after a tick in a silence:\n%s", got)
	}
}
