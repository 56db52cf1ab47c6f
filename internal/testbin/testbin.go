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
	"path/filepath"
	"sync"
	"testing"
)

// EnvBin names a prebuilt kfa binary the tests use instead of building
// one.
const EnvBin = "KFA_TEST_BIN"

var (
	once  sync.Once
	dir   string
	bin   string
	built error
)

// KFA returns the path of the kfa binary under test, building it the
// first time (see the package comment). A build failure fails t.
func KFA(t testing.TB) string {
	t.Helper()
	once.Do(func() { bin, built = build() })
	if built != nil {
		t.Fatal(built)
	}
	return bin
}

func build() (string, error) {
	if p := os.Getenv(EnvBin); p != "" {
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
		return "", fmt.Errorf("the go tool is needed to build kfa for this test: %w", err)
	}
	if dir, err = os.MkdirTemp("", "kfa-testbin-"); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "kfa")
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", out, "github.com/kfa-project/kfa/cmd/kfa")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build kfa: %w\n%s", err, b)
	}
	return out, nil
}

// Cleanup removes a binary KFA built. TestMain calls it after m.Run.
func Cleanup() {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
