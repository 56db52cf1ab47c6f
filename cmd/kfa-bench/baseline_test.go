package main

import (
	"archive/tar"
	"bytes"
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

// TestGitArchiveBaseline: the baseline commit's tree comes out of this
// clone's history with its kfa command in it (the build itself is left
// to the benchmark: it compiles every dependency of that tree).
func TestGitArchiveBaseline(t *testing.T) {
	if err := exec.Command("git", "cat-file", "-e", baselineCommit+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s is not in this clone's history: %v", shortCommit(baselineCommit), err)
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
