package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// heartbeat is how long testsum stays quiet before it says what is
// still running.
const heartbeat = 30 * time.Second

// options are testsum's own flags, before the go command.
type options struct {
	// postgres runs the tests against PostgreSQL: KFA_TEST_POSTGRES must
	// name a server that answers, and tests that would skip without one
	// fail instead.
	postgres bool
}

const usage = "usage: testsum [-postgres] go test [flags] [packages]"

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var o options
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-postgres", "--postgres":
			o.postgres = true
		default:
			fmt.Fprintf(stderr, "testsum: unknown flag %s\n%s\n", args[0], usage)
			return 2
		}
		args = args[1:]
	}
	if len(args) < 2 || args[1] != "test" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	env := os.Environ()
	if o.postgres {
		extra, err := postgresEnv(getenv)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		env = append(env, extra...)
	}
	cmdArgs := append([]string{"test", "-json"}, args[2:]...)
	cmd := exec.Command(args[0], cmdArgs...)
	cmd.Env = env
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	s := newSummary(stdout, time.Now)
	tick := time.NewTicker(heartbeat / 3)
	stop := s.heartbeats(tick.C, heartbeat)
	s.read(out)
	stop()
	tick.Stop()
	werr := cmd.Wait()
	s.finish(stdout, time.Since(start))
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		return ee.ExitCode()
	case werr != nil:
		fmt.Fprintln(stderr, "testsum:", werr)
		return 1
	}
	return 0
}
