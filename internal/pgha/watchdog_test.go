package pgha_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgha"
)

// abandonEnv makes TestWatchdogStopsAnAbandonedCluster's child start a
// primary and exit without closing its cluster, as a test binary that
// panicked or timed out does.
const abandonEnv = "PGHA_TEST_ABANDON"

// TestWatchdogStopsAnAbandonedCluster: a process that ends without
// Close (a test that panicked, or that go test killed at its timeout)
// leaves no server running and no directory behind: the watchdog stops
// the server and deletes the cluster within seconds.
func TestWatchdogStopsAnAbandonedCluster(t *testing.T) {
	if os.Getenv(abandonEnv) == "1" {
		c, err := pgha.New(os.Getenv("TMPDIR"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		n, err := c.Primary(ctx, "a")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("cluster", c.Dir(), n.Port)
		os.Exit(0) // no Close
	}
	pgha.Require(t)

	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogStopsAnAbandonedCluster$")
	cmd.Env = append(os.Environ(), abandonEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	var dir string
	var port int
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "cluster" {
			dir = f[1]
			port, _ = strconv.Atoi(f[2])
		}
	}
	if dir == "" {
		t.Fatalf("the child printed no cluster:\n%s", out)
	}
	t.Cleanup(func() { abandon(dir) }) // when the watchdog did not

	deadline := time.Now().Add(30 * time.Second)
	for {
		_, statErr := os.Stat(dir)
		conn, dialErr := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if conn != nil {
			conn.Close()
		}
		if os.IsNotExist(statErr) && dialErr != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after its process ended, the cluster is still there (directory: %v; server on port %d: %v)",
				statErr == nil, port, dialErr == nil)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// abandon stops the servers under dir and deletes it.
func abandon(dir string) {
	pids, _ := filepath.Glob(filepath.Join(dir, "*", "postmaster.pid"))
	for _, f := range pids {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil {
			_ = syscall.Kill(pid, syscall.SIGQUIT)
		}
	}
	time.Sleep(time.Second)
	_ = os.RemoveAll(dir)
}
