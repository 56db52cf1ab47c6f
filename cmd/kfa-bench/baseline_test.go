package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildBaselineMissing: a commit the clone's history lacks (a shallow
// clone, a tarball) skips the CPU ratio with a reason, and is no error.
func TestBuildBaselineMissing(t *testing.T) {
	bin, skipped, err := buildBaseline(t.Context(), "00000000000000000000000000000000000000ff", t.TempDir())
	if err != nil || bin != "" {
		t.Fatalf("bin %q, err %v", bin, err)
	}
	if !strings.Contains(skipped, "0000000") || !(strings.Contains(skipped, "not in this clone's git history") || strings.Contains(skipped, "no git")) {
		t.Fatalf("skipped: %q", skipped)
	}
}

func TestUntar(t *testing.T) {
	archive := func(entries ...*tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range entries {
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				if _, err := tw.Write([]byte(h.Name)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	reg := func(name string) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(name))}
	}
	dir := t.TempDir()
	err := untar(bytes.NewReader(archive(&tar.Header{Name: "cmd/", Typeflag: tar.TypeDir, Mode: 0o755}, reg("cmd/kfa/main.go"), reg("go.mod"),
		&tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "go.mod"})), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cmd/kfa/main.go", "go.mod", "link"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !strings.HasSuffix(name, "link") && string(b) != name {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	for _, name := range []string{"../escape", "/abs"} {
		if err := untar(bytes.NewReader(archive(reg(name))), t.TempDir()); err == nil {
			t.Errorf("%s: extracted outside the tree", name)
		}
	}
}

// envRequireBaseline makes a clone without the baseline commit (a shallow
// one) fail TestGitArchiveBaseline instead of skipping it; .ci/run sets it
// after fetching the history.
const envRequireBaseline = "KFA_REQUIRE_BASELINE"

// TestGitArchiveBaseline: the baseline commit's tree comes out of this
// clone's history with its kfa command in it (the build itself is left
// to the benchmark: it compiles every dependency of that tree).
func TestGitArchiveBaseline(t *testing.T) {
	if out, err := exec.Command("git", "cat-file", "-e", baselineCommit+"^{commit}").CombinedOutput(); err != nil {
		msg := fmt.Sprintf("commit %s is not in this clone's history (a shallow clone? git fetch --unshallow): %v: %s",
			shortCommit(baselineCommit), err, strings.TrimSpace(string(out)))
		if os.Getenv(envRequireBaseline) != "" {
			t.Fatalf("%s; %s is set, so this is a failure, not a skip", msg, envRequireBaseline)
		}
		t.Skipf("%s (%s=1 makes this a failure)", msg, envRequireBaseline)
	}
	dir := t.TempDir()
	if err := gitArchive(t.Context(), baselineCommit, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "cmd/kfa/main.go", "cmd/kfa-bench/main.go"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestBaselineRequired: in a clone without the baseline commit,
// TestGitArchiveBaseline skips, and fails when KFA_REQUIRE_BASELINE is set
// (as under .ci/run). It runs this test binary again on an empty
// repository (GIT_DIR), which lacks the commit as a shallow clone does.
func TestBaselineRequired(t *testing.T) {
	empty := t.TempDir()
	if out, err := exec.Command("git", "init", "--quiet", "--bare", empty).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	for _, tc := range []struct {
		name    string
		require string
		fails   bool
		says    string
	}{
		{"not required: a skip", "", false, "--- SKIP: TestGitArchiveBaseline"},
		{"required: a failure", "1", true, "--- FAIL: TestGitArchiveBaseline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestGitArchiveBaseline$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "GIT_DIR="+empty, envRequireBaseline+"="+tc.require)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.fails || !strings.Contains(string(out), tc.says) || !strings.Contains(string(out), "not in this clone's history") {
				t.Fatalf("want %q saying why, exit error %v:\n%s", tc.says, err, out)
			}
		})
	}
}
