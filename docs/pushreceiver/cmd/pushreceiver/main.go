// Command pushreceiver takes kfa's push notifications on this machine and
// prints each one it verified, one JSON line apiece, on stdout: the
// receiver of docs/push.md (package pushreceiver) behind a listener, for
// trying push notifications out (docs/push.md, "Trying it on one
// machine"). Its first line is the URL to give kfa in a push config:
//
//	listening on http://localhost:9099/kfa
//
// Usage:
//
//	pushreceiver [--addr localhost:9099] [--jwks URL] [--token TOKEN]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/kfa-project/kfa/docs/pushreceiver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pushreceiver:", err)
		os.Exit(1)
	}
}

// run listens until ctx ends.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pushreceiver", flag.ContinueOnError)
	addr := fs.String("addr", "localhost:9099", "`address` to listen on (port 0: any free one); its host is the printed URL's")
	jwks := fs.String("jwks", "http://127.0.0.1:8080/.well-known/jwks.json", "`URL` of kfa's signing keys")
	token := fs.String("token", "", "the push config's `token`, when it has one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	var mu sync.Mutex // one notification per line
	mux := http.NewServeMux()
	mux.Handle("/kfa", &pushreceiver.Receiver{JWKSURL: *jwks, Token: *token, Handle: func(event []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := fmt.Fprintf(stdout, "%s\n", event)
		return err
	}})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	host, _, _ := net.SplitHostPort(*addr)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if host == "" {
		host = "localhost"
	}
	fmt.Fprintf(stdout, "listening on http://%s/kfa\n", net.JoinHostPort(host, port))
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
