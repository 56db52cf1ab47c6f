package crashtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgtest"
)

// pgCluster is a PostgreSQL server of the test's own (.ci/postgres.sh), so
// that it can be stopped without disturbing other tests.
type pgCluster struct {
	script, dir, url string
}

// newCluster starts a dedicated server, stopped and deleted when t ends.
// It is skipped like every PostgreSQL test when KFA_TEST_POSTGRES is not
// set (the variable says that the machine runs PostgreSQL servers).
func newCluster(t *testing.T) *pgCluster {
	t.Helper()
	if os.Getenv(pgtest.EnvURL) == "" {
		if os.Getenv(pgtest.EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s is not set", pgtest.EnvRequire, pgtest.EnvURL)
		}
		// pgtest's words, so that make test counts this skip with theirs.
		t.Skipf("%s is not set: no PostgreSQL server to test against (.ci/postgres.sh start DIR starts one and prints its URL; .ci/run does it)", pgtest.EnvURL)
	}
	script, err := filepath.Abs(filepath.Join("..", ".ci", "postgres.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	// Not t.TempDir: as root, the cluster belongs to the postgres user,
	// which must reach the directory.
	c := &pgCluster{script: script, dir: filepath.Join(os.TempDir(), "kfa-pgrestart-"+hex.EncodeToString(b[:]))}
	t.Cleanup(func() {
		_ = exec.Command(c.script, "stop", c.dir).Run()
		_ = os.RemoveAll(c.dir)
	})
	out, err := exec.Command(script, "start", c.dir).Output()
	if err != nil {
		t.Fatalf("start a PostgreSQL server: %v", err)
	}
	c.url = strings.TrimSpace(string(out))
	return c
}

func (c *pgCluster) do(t *testing.T, cmd string) {
	t.Helper()
	if out, err := exec.Command(c.script, cmd, c.dir).CombinedOutput(); err != nil {
		t.Fatalf("postgres.sh %s: %v\n%s", cmd, err, out)
	}
}

// waitUntil polls cond until it holds, failing t after a generous deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(50 * time.Millisecond) // watching other processes
	}
}

func (l *ledger) asks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.asked)
}

// TestPostgresRestartUnderLoad stops PostgreSQL (pg_ctl stop -m fast)
// while 32 clients write through kfa, and starts it again: while it is
// down kfa answers 503 (readyz and an ask), it recovers by itself, and
// nothing it acknowledged before, during or after is lost.
func TestPostgresRestartUnderLoad(t *testing.T) {
	pg := newCluster(t)
	dir, err := os.MkdirTemp("", "kfa-pgrestart-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := buildKFA(t, dir)
	data := filepath.Join(dir, "data")
	p := serve(t, bin, data, pg.url)
	defer p.kill(t)
	base := "http://" + p.addr
	tokens := createAgents(t, bin, data, "pgr", 8)
	l := newLedger()
	recv := newPushReceiver(t)
	l.pushTo = recv.url
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { load(base, tokens, l, stop); close(done) }()

	waitUntil(t, "100 acknowledged asks before the stop", func() bool { return l.asks() >= 100 })
	pg.do(t, "stop")
	before := l.asks()
	ready := func() int {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitUntil(t, "/readyz to answer 503 with PostgreSQL down", func() bool { return ready() == http.StatusServiceUnavailable })
	// Anyone may read /readyz: it names no user, host or port.
	u, err := neturl.Parse(pg.url)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	secrets := []string{u.User.Username(), u.Hostname(), u.Port(), pass}
	if code, body := readyz(base); code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready: database unreachable") || containsAny(body, secrets) {
		t.Fatalf("/readyz with PostgreSQL down: %d %s; want 503 'not ready: database unreachable', naming no user, host or port", code, body)
	}
	yes := true
	_, err = client.New(base, client.WithToken(tokens[0])).SendMessage(context.Background(), a2a.SendMessageRequest{
		Message:       &a2a.Message{MessageID: "pg-down-ask", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(json.RawMessage(`{"action":"ask","question":"Is the database down?"}`))}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes},
	})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("an ask with PostgreSQL down: %v, want a 503", err)
	}
	t.Logf("PostgreSQL down: /readyz 503, an ask %d %s: %s", ce.StatusCode, ce.Status, ce.Message)
	during := l.asks() - before

	pg.do(t, "resume")
	waitUntil(t, "/readyz to answer 200 with PostgreSQL back", func() bool { return ready() == http.StatusOK })
	resumed := l.asks()
	waitUntil(t, "100 more acknowledged asks after PostgreSQL came back", func() bool { return l.asks() >= resumed+100 })
	close(stop)
	<-done
	select {
	case <-p.done:
		t.Fatalf("kfa exited while PostgreSQL was down:\n%s", p.logText())
	default:
	}
	verify(t, base, l)
	pushes := verifyPushes(t, base, recv, l)
	mustCheck(t, bin, data, pg.url)
	// The operator's log has the detail, once, and never the password.
	logs := p.logText()
	if !strings.Contains(logs, "not ready") || !strings.Contains(logs, u.Port()) || !strings.Contains(logs, "ready again") {
		t.Fatalf("the log does not say why the server was not ready, and that it is again:\n%s", logs)
	}
	if strings.Contains(logs, pass) {
		t.Fatal("the log holds the database password")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("PostgreSQL stopped and started under 32 clients, kfa not restarted: %d asks acknowledged before the stop, %d while it stopped, %d in all, %d completions, %d cancels; %s; kfa check passes",
		before, during, len(l.asked), len(l.completed), len(l.canceled), pushes)
}

// containsAny reports whether s holds any of the non-empty words.
func containsAny(s string, words []string) bool {
	for _, w := range words {
		if w != "" && strings.Contains(s, w) {
			return true
		}
	}
	return false
}
