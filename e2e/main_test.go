package e2e

import (
	"net/http"
	"os"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives the tests: every
// server (its listeners, streams and admin socket) must have shut down
// cleanly.
func TestMain(m *testing.M) {
	code := m.Run()
	http.DefaultClient.CloseIdleConnections()
	if code == 0 {
		// bleve starts a pool of analysis workers once per process, at
		// package init; they are not a leak of any server.
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker")); err != nil {
			os.Stderr.WriteString("goroutines leaked: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// raiseFileLimit lifts the soft open-file limit towards want (within the
// hard limit): a test with many open streams needs a descriptor for each
// end of each connection.
func raiseFileLimit(t *testing.T, want uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= want {
		return
	}
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < want {
		t.Fatalf("the open-file limit is %d (hard); this test needs %d", lim.Cur, want)
	}
}
