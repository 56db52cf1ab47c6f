package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
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
	s := newSummary(&out)
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
	s := newSummary(&out)
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
			got := run([]string{os.Args[0], "test", "./..."}, &out, &errb)
			if got != code || !strings.Contains(out.String(), "ok  \texample/a\t0.01s\n") {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", got, code, out.String(), errb.String())
			}
		})
	}
	if got := run([]string{"go", "vet"}, &bytes.Buffer{}, &bytes.Buffer{}); got != 2 {
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
		var n int
		fmt.Sscan(code, &n)
		os.Exit(n)
	}
	os.Exit(m.Run())
}
