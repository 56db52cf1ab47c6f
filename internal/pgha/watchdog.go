package pgha

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// watchdogScript waits for the process $1 to end, then stops every server
// whose data directory is under $2 (SIGQUIT to the postmaster is an
// immediate shutdown, as pg_ctl stop -m immediate sends, and needs no
// pg_ctl, which refuses root), waits up to 10 s for each to go, and
// deletes $2. A cluster closed in time has no directory left, and the
// script then only deletes nothing.
const watchdogScript = `
while kill -0 "$1" 2>/dev/null; do sleep 1; done
for f in "$2"/*/postmaster.pid; do
  [ -f "$f" ] || continue
  pid=$(head -n 1 "$f")
  case "$pid" in ''|*[!0-9]*) continue ;; esac
  kill -QUIT "$pid" 2>/dev/null || continue
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
done
rm -rf "$2"
`

// startWatchdog starts a process that stops c's servers and deletes its
// directory once this process ends, however it ends: a test that panics
// or times out (go test kills it) runs no Cleanup, and a postmaster would
// otherwise run on, holding its port and its directory, after the test
// binary is gone. It is a process group of its own, so that a signal to
// the test's group (Ctrl-C) does not end it with the test.
func (c *Cluster) startWatchdog() error {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "pgha-watchdog", strconv.Itoa(os.Getpid()), c.root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgha: start the watchdog: %w", err)
	}
	c.watchdog = cmd.Process
	go func() { _ = cmd.Wait() }() // reaped whenever it ends
	return nil
}

// stopWatchdog ends the watchdog of a cluster that Close stopped itself.
func (c *Cluster) stopWatchdog() {
	if c.watchdog != nil {
		_ = c.watchdog.Kill()
	}
}
