package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentEnv makes the test binary the parent of TestChildDiesWithBench:
// it starts a child with childAttr, prints its pid and exits without
// stopping it, as a bench that panics does.
const parentEnv = "KFA_BENCH_TEST_PARENT"

// childEnv makes the test binary that child: it waits ten minutes, as a
// server would serve, unless the parent's death ends it first.
const childEnv = "KFA_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	if os.Getenv(parentEnv) != "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		cmd.SysProcAttr = childAttr()
		if err := cmd.Start(); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestChildDiesWithBench: a server the bench started does not outlive it.
// A full run that panicked once left four kfa serve processes following
// PostgreSQL for the rest of the session.
func TestChildDiesWithBench(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run", "^$")
	parent.Env = append(os.Environ(), parentEnv+"=1")
	out, err := parent.Output()
	if err != nil {
		t.Fatalf("parent: %v: %s", err, out)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("parent said %q", out)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	deadline := time.Now().Add(time.Minute) // a guard, not a measure
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d outlived its parent by a minute", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting for its reaper has).
func alive(pid int) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "State:"); ok {
			return !strings.HasPrefix(strings.TrimSpace(v), "Z")
		}
	}
	return false
}
