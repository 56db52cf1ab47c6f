package docs

// Keeping the examples in their own directories. A reader runs them at
// the top of a clone, with their own HOME: an example must not leave a
// file there, nor write anywhere else. The examples test checks both:
//
//   - what a page's examples leave in its working directory (outside
//     ./data, the server's) is listed, and fails the page;
//   - where the kernel lets an unprivileged process make a mount
//     namespace (unshare(1): root, or user namespaces), each page's shell
//     runs in one where every mount is read-only except the page's own
//     directories (working directory, HOME, TMPDIR), /dev, /proc and
//     /sys, so an example that writes to /tmp/kfa.jar or into the real
//     clone fails there. Elsewhere the pages run without it, and
//     TestExamplesSandbox says why it skipped; with KFA_REQUIRE_SANDBOX=1
//     (.ci/run sets it) a missing sandbox fails instead, so CI always
//     checks.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// sandboxSetup runs inside the new mount namespace: it keeps $1 (the
// page's root) writable, makes every other mount but /dev, /proc and /sys
// read-only, and runs the script $2. Mount points in mountinfo are octal
// escaped (a space is \040), which printf %b undoes.
const sandboxSetup = `set -e
root=$1
mount --bind "$root" "$root"
while read -r _ _ _ _ m _; do
  m=$(printf '%b' "$m")
  case $m in
    "$root"|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;;
  esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done </proc/self/mountinfo
exec bash --noprofile --norc -c "$2"
`

// sandboxCmd runs a page's script read-only outside its root; nil runs
// it as it is, for want of a way to make the mount namespace.
type sandboxCmd struct {
	prefix []string // unshare and its flags
}

var (
	sandboxOnce   sync.Once
	sandboxFound  *sandboxCmd
	sandboxReason string // why there is none
)

// envRequireSandbox makes a missing sandbox a failure instead of a skip.
const envRequireSandbox = "KFA_REQUIRE_SANDBOX"

// sandbox returns how to run scripts read-only outside their directories,
// or nil, having found out once per test process (by trying it). Under
// KFA_REQUIRE_SANDBOX a missing sandbox fails t.
func sandbox(t *testing.T) *sandboxCmd {
	t.Helper()
	sandboxOnce.Do(func() { sandboxFound, sandboxReason = probeSandbox() })
	if sandboxFound == nil && os.Getenv(envRequireSandbox) != "" {
		t.Fatalf("no read-only sandbox for the examples: %s; %s is set, so this is a failure, not a skip "+
			"(install util-linux for unshare, and allow unprivileged user namespaces or run as root: "+
			"on Ubuntu 24.04, sysctl kernel.apparmor_restrict_unprivileged_userns=0)", sandboxReason, envRequireSandbox)
	}
	return sandboxFound
}

// command is bash running script, in the sandbox when there is one, with
// root (which holds the working directory, HOME and TMPDIR) writable.
func (b *sandboxCmd) command(ctx context.Context, root, script string) *exec.Cmd {
	if b == nil {
		return exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script)
	}
	args := append(append([]string{}, b.prefix[1:]...), "bash", "--noprofile", "--norc", "-c", sandboxSetup, "sandbox", root, script)
	return exec.CommandContext(ctx, b.prefix[0], args...)
}

// note is what a page's log adds about the sandbox.
func (b *sandboxCmd) note() string {
	if b == nil {
		return " (writes outside the page's directories not checked: " + sandboxReason + ")"
	}
	return ""
}

// probeSandbox tries the sandbox: a script in it must write into its root
// and fail to write beside it.
func probeSandbox() (*sandboxCmd, string) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, "no unshare command (util-linux)"
	}
	if _, err := exec.LookPath("bash"); err != nil {
		return nil, "no bash"
	}
	prefix := []string{unshare, "--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		prefix = []string{unshare, "--user", "--map-root-user", "--mount", "--propagation", "private"}
	}
	root, err := os.MkdirTemp("", "kfa-sandbox-")
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(root)
	beside, err := os.MkdirTemp("", "kfa-sandbox-beside-")
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(beside)
	b := &sandboxCmd{prefix: prefix}
	script := fmt.Sprintf("touch %s && ! touch %s 2>/dev/null", shellQuote(filepath.Join(root, "in")), shellQuote(filepath.Join(beside, "out")))
	out, err := b.command(context.Background(), root, script).CombinedOutput()
	if err != nil {
		return nil, fmt.Sprintf("cannot make a read-only mount namespace here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	if _, err := os.Stat(filepath.Join(root, "in")); err != nil {
		return nil, "the sandbox did not let a script write into its own directory"
	}
	if _, err := os.Stat(filepath.Join(beside, "out")); err == nil {
		return nil, "the sandbox let a script write outside its directory"
	}
	return b, ""
}

// TestExamplesSandbox: in the sandbox the examples run in, a script
// writes into its own directories, and fails to write into /tmp (beside
// them), into its real clone, or into the user's HOME.
func TestExamplesSandbox(t *testing.T) {
	box := sandbox(t)
	if box == nil {
		t.Skip("the examples run without the read-only sandbox: " + sandboxReason + " (" + envRequireSandbox + "=1 makes this a failure)")
	}
	root := t.TempDir()
	beside := t.TempDir()
	clone, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		ok         bool
	}{
		{"its own directory", filepath.Join(root, "home", "kfa.fish"), true},
		{"a /tmp file beside it", filepath.Join(beside, "kfa.jar"), false},
		{"the real clone", filepath.Join(clone, ".sandbox-probe"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := fmt.Sprintf("mkdir -p %s && echo x > %s", shellQuote(filepath.Dir(tc.path)), shellQuote(tc.path))
			out, err := box.command(context.Background(), root, script).CombinedOutput()
			_, statErr := os.Stat(tc.path)
			if !tc.ok {
				_ = os.Remove(tc.path)
			}
			if tc.ok != (err == nil) || tc.ok != (statErr == nil) {
				t.Fatalf("writing %s: %v (%s), file there: %v; want it allowed: %v", tc.path, err, out, statErr == nil, tc.ok)
			}
			if !tc.ok && !strings.Contains(string(out), "Read-only file system") {
				t.Errorf("the refusal does not say why: %s", out)
			}
		})
	}
}

// TestSandboxRequired: without unshare, TestExamplesSandbox skips, and
// fails when KFA_REQUIRE_SANDBOX is set (as under .ci/run). It runs this
// test binary again with a PATH that has no unshare.
func TestSandboxRequired(t *testing.T) {
	for _, tc := range []struct {
		name    string
		require string
		fails   bool
		says    string
	}{
		{"not required: a skip", "", false, "--- SKIP: TestExamplesSandbox"},
		{"required: a failure", "1", true, "--- FAIL: TestExamplesSandbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestExamplesSandbox$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "PATH="+t.TempDir(), envRequireSandbox+"="+tc.require)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.fails || !strings.Contains(string(out), tc.says) || !strings.Contains(string(out), "no unshare command") {
				t.Fatalf("want %q saying why (no unshare), exit error %v:\n%s", tc.says, err, out)
			}
		})
	}
}

// snapshot lists the files and directories under dir, except ./data,
// with the files' size and modification time.
func snapshot(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "data" {
			return filepath.SkipDir // the server's, as with make run
		}
		if d.IsDir() {
			out[rel] = "dir" // its time changes with what it holds, which is listed
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return out, err
}

// leftovers are the paths under dir that are new, changed or gone since
// before.
func leftovers(t *testing.T, dir string, before map[string]string) []string {
	t.Helper()
	after, err := snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p, v := range after {
		switch w, ok := before[p]; {
		case !ok:
			out = append(out, p)
		case v != w:
			out = append(out, p+" (changed)")
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p+" (removed)")
		}
	}
	sort.Strings(out)
	return out
}

// TestLeftovers: a file an example leaves in the working directory is
// found, as are changed and removed ones; the server's ./data is not.
func TestLeftovers(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"samples/records.jsonl", "samples/relevance.json", "bin/kfa"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := leftovers(t, dir, before); len(got) != 0 {
		t.Fatalf("nothing done, leftovers %v", got)
	}
	for _, f := range []string{"data/kfa.db", "data/index/x", "my-records.jsonl", "backups/kfa.db"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "samples/records.jsonl"), []byte("longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "samples/relevance.json")); err != nil {
		t.Fatal(err)
	}
	want := []string{"backups", "backups/kfa.db", "my-records.jsonl", "samples/records.jsonl (changed)", "samples/relevance.json (removed)"}
	if got := leftovers(t, dir, before); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("leftovers %v, want %v", got, want)
	}
}
