// Command kfa is the kfa server and its operator CLI. See `kfa help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is stamped at build time: -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(fmt.Errorf("received %s", signalName(sig)))
		<-sigs
		fmt.Fprintln(os.Stderr, "kfa: second signal, exiting without waiting")
		os.Exit(130)
	}()
	os.Exit(run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// signalName is the conventional name of a stop signal, for the log.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
