// Package testbin gives tests that run kfa as a separate process (crash
// and restart tests, the docs examples, the CLI against a live server) a
// kfa binary, built at most once per test process.
//
// Building it is the costly part of those tests: a build per test links
// the whole binary each time, and a build with other flags than `make
// build` compiles every package again on a first run. So:
//
//   - KFA_TEST_BIN, when set, names the binary to use: `make test` builds
//     ./bin/kfa first (make build) and sets it, so no test builds at all;
//   - otherwise the first test that asks builds it into a temp dir with
//     make build's flags (CGO_ENABLED=0, -trimpath), so the build cache
//     that `make run` filled serves it, and later tests reuse it.
//
// It is for tests only; nothing outside _test.go files imports it.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

// EnvBin names a prebuilt kfa binary the tests use instead of building
// one.
const EnvBin = "KFA_TEST_BIN"

// kfaPkg is the kfa command's import path.
const kfaPkg = "github.com/kfa-project/kfa/cmd/kfa"

var (
	mu    sync.Mutex
	dir   string                // where this process's builds go
	built = map[string]*build{} // by import path
)

// build is one command's binary, built once.
type build struct {
	once sync.Once
	path string
	err  error
}

// KFA returns the path of the kfa binary under test, building it the
// first time (see the package comment). A build failure fails t.
func KFA(t testing.TB) string {
	t.Helper()
	return Command(t, kfaPkg)
}

// Command returns the path of the command pkg (an import path of this
// module) built as KFA builds kfa: once per test process, with make
// build's flags. A build failure fails t.
func Command(t testing.TB, pkg string) string {
	t.Helper()
	mu.Lock()
	b := built[pkg]
	if b == nil {
		b = &build{}
		built[pkg] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.path, b.err = compile(pkg) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func compile(pkg string) (string, error) {
	if p := os.Getenv(EnvBin); p != "" && pkg == kfaPkg {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("%s: %w", EnvBin, err)
		}
		return abs, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go tool is needed to build %s for this test: %w", pkg, err)
	}
	mu.Lock()
	if dir == "" {
		dir, err = os.MkdirTemp("", "kfa-testbin-")
	}
	d := dir
	mu.Unlock()
	if err != nil {
		return "", err
	}
	out := filepath.Join(d, path.Base(pkg))
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// Cleanup removes the binaries this process built. TestMain calls it
// after m.Run.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
