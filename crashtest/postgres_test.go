package crashtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
)

// TestCrashRecoveryPostgres is TestCrashRecovery on a PostgreSQL database
// (KFA_TEST_POSTGRES): kill -9 under load, restart, nothing acknowledged
// lost, every acknowledged transition with a push config delivered.
func TestCrashRecoveryPostgres(t *testing.T) { crashRecovery(t, pgtest.URL(t)) }

// TestPostgresTwoProcessesUnderLoad: 32 clients split over two kfa serve
// processes on one database ask, reply (a reply often on the other
// process than the ask), cancel and poll their inboxes; afterwards kfa
// check is clean and both processes show every acknowledged write.
func TestPostgresTwoProcessesUnderLoad(t *testing.T) {
	store := pgtest.URL(t)
	dir, err := os.MkdirTemp("", "kfa-two-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := buildKFA(t, dir)
	a := serve(t, bin, filepath.Join(dir, "a"), store)
	defer a.kill(t)
	b := serve(t, bin, filepath.Join(dir, "b"), store)
	defer b.kill(t)
	tokens := createAgents(t, bin, filepath.Join(dir, "a"), "two", 8)
	l := newLedger()
	recv := newPushReceiver(t)
	l.pushTo = recv.url
	bases := []string{"http://" + a.addr, "http://" + b.addr}
	stop := make(chan struct{})
	done := make(chan struct{})
	// Client w asks on bases[w%2]; the agent that answers it replies
	// through the other process.
	go func() { loadN(workers, bases, tokens, l, stop); close(done) }()
	waitUntil(t, "400 acknowledged asks over both processes", func() bool { return l.asks() >= 400 })
	close(stop)
	<-done
	for _, base := range bases {
		verify(t, base, l)
	}
	pushes := verifyPushes(t, bases[0], recv, l)
	waitOutboxEmpty(t, bases[1])
	mustCheck(t, bin, "", store)
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("32 clients over two processes: %d asks, %d completions, %d cancels, %d replies, %d inbox acks acknowledged, all seen on both processes; %s; kfa check passes",
		len(l.asked), len(l.completed), len(l.canceled), len(l.replies), len(l.acked), pushes)
}
