package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestListens: the first line is the URL to give kfa, with the host as
// given and the port chosen; a request kfa did not sign is refused and
// prints nothing. (docs/push.md runs it against a real kfa.)
func TestListens(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "localhost:0", "--jwks", "http://127.0.0.1:1/none"}, pw)
		_ = pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no first line: %v", <-done)
	}
	url, ok := strings.CutPrefix(sc.Text(), "listening on ")
	if !ok || !strings.HasPrefix(url, "http://localhost:") || !strings.HasSuffix(url, "/kfa") || strings.HasSuffix(url, ":0/kfa") {
		t.Fatalf("first line %q", sc.Text())
	}
	resp, err := http.Post(url, "application/a2a+json", strings.NewReader(`{"statusUpdate":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned request: %d, want 401", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sc.Scan() {
		t.Fatalf("printed %q for a request it refused", sc.Text())
	}
}
