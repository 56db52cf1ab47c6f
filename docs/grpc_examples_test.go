package docs

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pageExtras are what a page's run adds: (old, new) pairs replaced in its
// blocks besides the server's URL, and a directory put first on PATH.
type pageExtras struct {
	repl []string
	path string
}

// docsGRPCAddr is the gRPC address the pages use, as the README's
// KFA_GRPC_ADDR=127.0.0.1:9090 make run would serve it.
const docsGRPCAddr = "127.0.0.1:9090"

// grpcurlModule is the grpcurl the pages run, at a pinned version.
const grpcurlModule = "github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3"

// grpcPage gives a page whose server has the gRPC binding on
// (KFA_GRPC_ADDR=127.0.0.1:9090 in its serve-env) a free port in that
// address's place, in the server's environment and in the page's
// examples, and grpcurl on PATH.
func grpcPage(t *testing.T, env []string) ([]string, pageExtras) {
	t.Helper()
	var extra pageExtras
	for i, kv := range env {
		if kv != "KFA_GRPC_ADDR="+docsGRPCAddr {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		env = append(append([]string(nil), env[:i]...), env[i+1:]...)
		env = append(env, "KFA_GRPC_ADDR="+addr)
		extra.repl = []string{docsGRPCAddr, addr}
		extra.path = filepath.Dir(grpcurl(t))
	}
	return env, extra
}

// grpcurl returns a grpcurl binary: the one on PATH, or one installed
// once from the Go module proxy into the user's cache. Without either it
// skips, or fails under CI, which must run every example.
func grpcurl(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("grpcurl"); err == nil {
		return p
	}
	bin, err := installGrpcurl()
	if err == nil {
		return bin
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("grpcurl is needed by the gRPC examples and could not be installed: %v", err)
	}
	t.Skipf("the gRPC examples need grpcurl (go install %s): %v", grpcurlModule, err)
	return ""
}

// installGrpcurl installs grpcurl into the user's cache, into a directory
// of its own first, then moved in place: a run that stops halfway leaves
// nothing half installed.
func installGrpcurl() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	_, version, _ := strings.Cut(grpcurlModule, "@")
	dir := filepath.Join(cache, "kfa-test", "grpcurl-"+version)
	bin := filepath.Join(dir, "grpcurl")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(goTool, "install", grpcurlModule)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %v: %s", grpcurlModule, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(bin); serr != nil { // not another run's install either
			return "", err
		}
	}
	return bin, nil
}
