package main

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfa-project/kfa/knowledge/knowledgetest"
)

// TestImport100k imports 100,000 generated records into a running kfa
// serve, as an operator would, and reports time, peak memory and sizes.
// It takes about a minute, so it runs only with KFA_BIG=1:
//
//	KFA_BIG=1 go test -run TestImport100k -v ./cmd/kfa
func TestImport100k(t *testing.T) {
	if os.Getenv("KFA_BIG") == "" {
		t.Skip("set KFA_BIG=1 to import 100,000 records")
	}
	const n, badLine = 100_001, 50_001 // 100,000 records and one malformed line
	bin := buildKFA(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "records.jsonl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if err := knowledgetest.WriteJSONL(w, 1, n, badLine); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	st, _ := os.Stat(file)
	t.Logf("input: %d lines, %.1f MiB", n, float64(st.Size())/(1<<20))

	data := filepath.Join(dir, "data")
	srv := serve(t, bin, data)

	importFile := func() (importResult, time.Duration, int64) {
		t.Helper()
		cmd := exec.Command(bin, "records", "import", file, "--json", "--data", data)
		start := time.Now()
		out, err := cmd.Output()
		took := time.Since(start)
		var res importResult
		if jerr := json.Unmarshal(out, &res); jerr != nil {
			t.Fatalf("import: %v, %v: %s", err, jerr, out)
		}
		// Exit status 1: the malformed line was rejected, as it should be.
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			t.Fatalf("import: %v", err)
		}
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
		return res, took, rss
	}

	res, took, cliRSS := importFile()
	if res.Added != n-1 || res.Rejected != 1 || len(res.Errors) != 1 || res.Errors[0].Line != badLine {
		t.Fatalf("first import: %+v", res.ImportSummary)
	}
	t.Logf("first import: %d added, rejected line %d (%s) in %s, %.0f records/s (searchable when the command returned)",
		res.Added, res.Errors[0].Line, res.Errors[0].Message, took.Round(time.Millisecond), float64(res.Added)/took.Seconds())
	t.Logf("peak RSS: server %.0f MiB, CLI %.0f MiB", float64(peakRSS(t, srv.cmd.Process.Pid))/1024, float64(cliRSS)/1024)
	t.Logf("sizes: kfa.db %.1f MiB, index %.1f MiB", mib(t, filepath.Join(data, "kfa.db")), mib(t, filepath.Join(data, "index")))

	for _, i := range []int{0, 777, badLine - 2, badLine, n - 1} {
		if got := top(t, srv.base, knowledgetest.Marker(i)); got != strings.Replace(knowledgetest.Marker(i), "marker", "gen-", 1) {
			t.Fatalf("record %d: search found %q", i, got)
		}
	}

	res, took, _ = importFile()
	if res.Unchanged != n-1 || res.Added+res.Updated != 0 || res.Rejected != 1 || res.Errors[0].Line != badLine {
		t.Fatalf("re-import: %+v", res.ImportSummary)
	}
	t.Logf("re-import: %d unchanged, 1 rejected (line %d) in %s", res.Unchanged, res.Errors[0].Line, took.Round(time.Millisecond))
	t.Logf("peak RSS after re-import: server %.0f MiB", float64(peakRSS(t, srv.cmd.Process.Pid))/1024)

	srv.stop(t)
	start := time.Now()
	if err := os.RemoveAll(filepath.Join(data, "index")); err != nil {
		t.Fatal(err)
	}
	srv = serve(t, bin, data)
	t.Logf("start with a rebuild of the index from 100,000 records: %s", time.Since(start).Round(time.Millisecond))
	srv.stop(t)
}

// peakRSS is a process's peak resident set size in KiB (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// mib is the size of a file or directory tree in MiB.
func mib(t *testing.T, path string) float64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return float64(total) / (1 << 20)
}
