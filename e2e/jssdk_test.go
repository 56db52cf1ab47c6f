package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/server"
)

// EnvRequireNode makes the tests that need Node.js or npm (the official JS
// SDK, axe-core in Chromium) fail rather than skip when Node.js, npm or
// their packages are not to be had (.ci/run sets it).
const EnvRequireNode = "KFA_REQUIRE_NODE"

// TestJSSDK runs the official JS SDK, @a2a-js/sdk 1.3.0, against kfa
// (testdata/jssdk/client.mjs): it parses the card, its getAgentCard()
// reads the extended card anonymously, it searches without a credential,
// and its own credential mechanism (an AuthenticationHandler behind
// createAuthenticatingFetchWithRetry) sends the agent token, as a bearer
// and as X-API-Key, when kfa's challenge asks for one, over JSON-RPC and
// HTTP+JSON; a bad token is refused. It needs Node.js 20 or later (or npm
// to fetch one) and the SDK from npm, installed once into the user's
// cache directory.
func TestJSSDK(t *testing.T) {
	node, dir := jsSDK(t)
	h := start(t, func(c *server.Config) { c.AskRate = 0 })
	alice, _ := h.agent("alice")
	runJS(t, node, dir, "client.mjs", "KFA_URL="+h.url, "KFA_PUBLIC_URL="+h.cfg.PublicURL, "KFA_TOKEN="+alice.Token)
}

// TestJSSDKOverGRPC runs @a2a-js/sdk's gRPC transport (its
// client/grpc entry, on @grpc/grpc-js) against kfa's gRPC binding
// (testdata/jssdk/grpc.mjs): it picks the card's GRPC interface and calls
// every method, the agent token sent as authorization metadata by a call
// interceptor; a subscription sees a cancel, a foreign task is not found
// and a bad token is refused.
func TestJSSDKOverGRPC(t *testing.T) {
	node, dir := jsSDK(t)
	h := start(t, func(c *server.Config) { c.AskRate = 0; withGRPC(c) })
	alice, _ := h.agent("alice")
	bob, _ := h.agent("bob")
	runJS(t, node, dir, "grpc.mjs", "KFA_URL="+h.url, "KFA_GRPC="+h.srv.GRPCAddr(), "KFA_TOKEN="+alice.Token, "KFA_OTHER_TOKEN="+bob.Token)
}

// runJS runs testdata/jssdk/NAME with the SDK installed in dir and env
// added to the environment, and fails the test when it fails.
func runJS(t *testing.T, node []string, dir, name string, env ...string) {
	t.Helper()
	script := filepath.Join(dir, strings.TrimSuffix(name, ".mjs")+"-"+strconv.Itoa(os.Getpid())+".mjs")
	src, err := os.ReadFile(filepath.Join("testdata", "jssdk", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(script) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node[0], append(node[1:], script)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("@a2a-js/sdk (%s) against kfa:\n%s", name, out)
	if err != nil {
		t.Fatalf("the JS SDK client failed: %v", err)
	}
}

// jsSDK returns the command that runs Node.js 20 or later and the
// directory where the SDK is installed, or skips the test (fails it under
// KFA_REQUIRE_NODE) saying what is missing.
func jsSDK(t *testing.T) (node []string, dir string) {
	t.Helper()
	dir = npmInstalled(t, "jssdk", filepath.Join("node_modules", "@a2a-js", "sdk", "package.json"))
	node = []string{"node"}
	if v, err := exec.Command("node", "--version").Output(); err != nil || nodeMajor(string(v)) < 20 {
		// An older or missing node: npm fetches a current one.
		node = []string{"npx", "--yes", "node@22"}
	}
	return node, dir
}

// nodeUnavailable skips the test saying what is missing, or fails it
// under KFA_REQUIRE_NODE.
func nodeUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(EnvRequireNode) != "" {
		t.Fatalf("%s (%s is set)", msg, EnvRequireNode)
	}
	t.Skipf("%s; install Node.js 20+ and npm to run these tests (%s=1 makes this a failure)", msg, EnvRequireNode)
}

// npmInstalled installs the packages of testdata/NAME (its package.json
// and package-lock.json) once with npm ci into the user's cache
// directory, and returns that directory; marker, a path in it, says the
// install is complete. Without npm, or when the install fails, the test
// skips (fails under KFA_REQUIRE_NODE).
func npmInstalled(t *testing.T, name, marker string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		nodeUnavailable(t, "npm is not installed")
	}
	spec, err := os.ReadFile(filepath.Join("testdata", name, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join("testdata", name, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(append(spec, lock...))
	dir := filepath.Join(cache, "kfa-test", name+"-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
		return dir
	}
	// Install into a directory of its own, then move it in place: a test
	// run that stops halfway leaves nothing half installed.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package.json": spec, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		nodeUnavailable(t, "npm ci of testdata/%s failed: %v: %s", name, err, lastLines(string(out), 5))
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(dir); serr != nil { // not another run's install either
			t.Fatal(err)
		}
	}
	return dir
}

// nodeMajor reads the major version of "v20.11.1".
func nodeMajor(v string) int {
	major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	n, _ := strconv.Atoi(major)
	return n
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
