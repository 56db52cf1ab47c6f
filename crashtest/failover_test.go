package crashtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/pgha"
)

// recoverWithin is how soon after a promotion every kfa process must
// answer an ask again (issue 34).
const recoverWithin = 10 * time.Second

// failoverClients is the load's clients (each paced): fewer than the crash tests',
// since three kfa processes and two PostgreSQL servers share the machine.
const failoverClients = 8

// TestPostgresFailover: two kfa processes on a multi-host URL naming a
// primary and its synchronous standby, under a mixed load (asks, replies,
// cancels, flags, inbox acks, push deliveries to a local receiver, and
// streams that a client resumes with Last-Event-ID). The primary is
// stopped with -m immediate and the standby promoted, three times in a
// row, the old primary rewound into the new one's standby each time, the
// load running throughout. Each time, every process answers an ask again
// within recoverWithin of the promotion (the times are printed). Then
// every write acknowledged 2xx is there on both processes, every
// completed task has its reply, search on both processes finds every
// discussion, every due push arrived exactly once, every stream got every
// event of its task once, and kfa check passes. A third process, with
// --require-sync-replica, refuses writes and fails /readyz, saying why,
// while the new primary has no synchronous standby.
//
// Then the same failover under asynchronous replication, the standby cut
// off from the primary first: what was acknowledged after that is lost
// (the test prints how much), kfa says so in its log, and kfa check
// passes on the new primary: nothing half-written is visible.
func TestPostgresFailover(t *testing.T) {
	began := time.Now()
	cl, a, b := newPair(t)
	url := cl.MultiURL("kfa", a, b)
	dir, err := os.MkdirTemp("", "kfa-failover-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := buildKFA(t, dir)
	limits := []string{"--flag-rate", "0", "--flag-hide-threshold", "0", "--request-rate", "0"}
	p1 := serve(t, bin, filepath.Join(dir, "p1"), url, limits...)
	defer p1.kill(t)
	p2 := serve(t, bin, filepath.Join(dir, "p2"), url, limits...)
	defer p2.kill(t)
	strict := serve(t, bin, filepath.Join(dir, "p3"), url, append(limits, "--require-sync-replica")...)
	defer strict.kill(t)
	procs := []*proc{p1, p2}
	bases := []string{"http://" + p1.addr, "http://" + p2.addr}
	tokens := createAgents(t, bin, filepath.Join(dir, "p1"), "fo", 8)

	l := newLedger()
	recv := newPushReceiver(t)
	l.pushTo = recv.url
	f := newFailLoad(l, bases, tokens)
	defer f.sse.close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { f.run(failoverClients, stop); close(done) }()
	stopLoad := func() {
		select {
		case <-stop:
		default:
			close(stop)
			<-done
		}
	}
	defer stopLoad()

	primary, standby := a, b
	for round := 1; round <= 3; round++ {
		before := f.asks()
		waitUntil(t, "40 more asks before the failover", func() bool { return f.asks() >= before+40 })
		promoted := failover(t, primary, standby, f, bases, tokens)
		if round == 1 {
			requireSync(t, "http://"+strict.addr, tokens[0], false)
		}
		after := f.asks()
		waitUntil(t, "40 asks on the new primary", func() bool { return f.asks() >= after+40 })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if err := primary.Rewind(ctx, standby); err != nil {
			cancel()
			t.Fatal(err)
		}
		if err := standby.SetSync(ctx, true); err != nil {
			cancel()
			t.Fatal(err)
		}
		cancel()
		if round == 1 {
			requireSync(t, "http://"+strict.addr, tokens[0], true)
		}
		t.Logf("failover %d: %s promoted (%s); %s rewound into its synchronous standby; %d asks acknowledged so far",
			round, standby.Name, promoted, primary.Name, f.asks())
		primary, standby = standby, primary
	}
	stopLoad()

	streams, err := f.sse.check(l, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range bases {
		verify(t, base, l)
	}
	pushes := verifyPushes(t, bases[0], recv, l)
	waitOutboxEmpty(t, bases[1])
	if dups := duplicates(recv); len(dups) != 0 {
		var detail []string
		for _, d := range dups {
			detail = append(detail, string(run(t, bin, "push", "list", "--data", filepath.Join(dir, "p1"), "--task", d, "--json")))
		}
		t.Fatalf("%d pushes sent twice for one attempt: %s\n%s", len(dups), pushes, strings.Join(detail, "\n"))
	}
	flags := f.verifyFlags(t, bases[1])
	found := 0
	for i, base := range bases {
		if strings.Contains(procs[i].logText(), "lost events") {
			t.Errorf("process %d says events were lost under synchronous replication:\n%s", i+1, procs[i].logText())
		}
		found = f.verifySearch(t, base)
	}
	mustCheck(t, bin, "", url)
	for _, p := range procs {
		if strings.Contains(p.logText(), "lost events") {
			t.Fatalf("kfa says events were lost under synchronous replication:\n%s", p.logText())
		}
	}
	l.mu.Lock()
	t.Logf("three failovers under load, synchronous replication: %d asks, %d completions, %d cancels, %d replies, %d inbox acks, %d flags acknowledged, all there on both processes; search on both finds all %d discussions; %s; %s; kfa check passes",
		len(l.asked), len(l.completed), len(l.canceled), len(l.replies), len(l.acked), flags, found, pushes, streams)
	l.mu.Unlock()

	asyncFailover(t, bin, dir, primary, standby, url, procs, bases, tokens)
	t.Logf("the whole test took %s", time.Since(began).Round(time.Second))
}

// failover stops primary with -m immediate under the load, promotes
// standby, cuts every stream (their clients resume), and checks that each
// process answers an ask within recoverWithin of the promotion. It returns
// the times, for the log.
func failover(t *testing.T, primary, standby *pgha.Node, f *failLoad, bases, tokens []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	crash := time.Now()
	if err := primary.Stop(ctx, "immediate"); err != nil {
		t.Fatal(err)
	}
	f.sse.cut()
	firsts := make([]time.Time, len(bases))
	errs := make([]error, len(bases))
	var wg sync.WaitGroup
	for i, base := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			firsts[i], errs[i] = firstAsk(base, tokens[i], time.Now().Add(time.Minute))
		}()
	}
	promote := time.Now()
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	wg.Wait()
	var took []string
	for i, first := range firsts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		d := first.Sub(promote)
		if d > recoverWithin {
			t.Fatalf("process %d answered its first ask %s after the promotion began, more than %s", i+1, d, recoverWithin)
		}
		took = append(took, fmt.Sprintf("process %d's first ask %s", i+1, d.Round(time.Millisecond)))
	}
	return fmt.Sprintf("pg_ctl stop -m immediate took %s, pg_ctl promote -w %s; after the promotion began, %s",
		promote.Sub(crash).Round(time.Millisecond), promoted.Sub(promote).Round(time.Millisecond), strings.Join(took, ", "))
}

// requireSync checks the process at base, run with --require-sync-replica:
// without a synchronous standby (sync false) /readyz fails saying so and
// an ask is refused with a 503 that says why; with one, both work again.
// The process checks the standbys every second.
func requireSync(t *testing.T, base, token string, sync bool) {
	t.Helper()
	if !sync {
		last := ""
		waitUntil(t, "/readyz to say there is no synchronous standby", func() bool {
			code, body := readyz(base)
			if said := fmt.Sprintf("%d %s", code, body); said != last {
				t.Logf("/readyz of the --require-sync-replica process: %s", said) // what it said instead, if this gives up
				last = said
			}
			return code == http.StatusServiceUnavailable && strings.Contains(body, "not ready: no synchronous standby")
		})
		_, err := firstAsk(base, token, time.Now())
		if err == nil || !strings.Contains(err.Error(), "until a synchronous standby is back") {
			t.Fatalf("an ask without a synchronous standby under --require-sync-replica: %v, want a 503 saying why", err)
		}
		return
	}
	waitUntil(t, "/readyz to answer 200 with a synchronous standby back", func() bool {
		code, _ := readyz(base)
		return code == http.StatusOK
	})
	if _, err := firstAsk(base, token, time.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
}

// duplicates are the tasks of the requests the receiver got for a
// delivery it had got already: on a receiver that answers 2xx at once, a
// delivery is sent once, its only attempt.
func duplicates(r *pushReceiver) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var tasks []string
	for task, list := range r.got {
		seen := map[string]bool{}
		for _, s := range list {
			if seen[s.jti] {
				tasks = append(tasks, task)
			}
			seen[s.jti] = true
		}
	}
	return tasks
}

// asyncFailover makes the pair asynchronous, cuts the standby off from
// the primary under load, stops the primary and promotes the standby:
// every ask acknowledged after the cut is lost, none before it is; both
// processes log that the database lost events; kfa check passes on the
// new primary.
func asyncFailover(t *testing.T, bin, dir string, primary, standby *pgha.Node, url string, procs []*proc, bases, tokens []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := primary.SetSync(ctx, false); err != nil {
		t.Fatal(err)
	}
	// The running processes warn when their standby turns asynchronous,
	// and one that starts now warns at once.
	waitUntil(t, "a warning that the standby is asynchronous now", func() bool {
		return strings.Contains(procs[0].logText(), "a failover may lose writes kfa acknowledged")
	})
	late := serve(t, bin, filepath.Join(dir, "late"), url)
	late.kill(t)
	if lines := late.logText(); !strings.Contains(lines, "a failover may lose writes kfa acknowledged") || !strings.Contains(lines, "no synchronous standby: 1 asynchronous") {
		t.Fatalf("a process started with only an asynchronous standby did not warn:\n%s", lines)
	}
	l := newLedger()
	recv := newPushReceiver(t)
	l.pushTo = recv.url
	f := newFailLoad(l, bases, tokens)
	defer f.sse.close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { f.run(failoverClients, stop); close(done) }()
	waitUntil(t, "30 asks under asynchronous replication", func() bool { return f.asks() >= 30 })
	// Every ask acknowledged before cut committed before the primary's
	// WAL position that the standby replays; then it receives no more.
	cut := time.Now()
	if err := primary.WaitReplayed(ctx, standby.Name); err != nil {
		close(stop)
		t.Fatal(err)
	}
	if err := standby.Detach(ctx); err != nil {
		close(stop)
		t.Fatal(err)
	}
	n := f.asks()
	waitUntil(t, "30 asks the standby does not receive", func() bool { return f.asks() >= n+30 })
	if err := primary.Stop(ctx, "immediate"); err != nil {
		close(stop)
		t.Fatal(err)
	}
	if err := standby.Promote(ctx); err != nil {
		close(stop)
		t.Fatal(err)
	}
	close(stop)
	<-done

	lost, lostBefore, after := 0, 0, 0
	f.mu.Lock()
	for id, at := range f.at {
		l.mu.Lock()
		tok := l.asked[id]
		l.mu.Unlock()
		_, err := client.New(bases[0], client.WithToken(tok)).GetTask(ctx, id, nil)
		if at.After(cut) {
			after++
		}
		if err == nil {
			continue
		}
		var ce *client.Error
		if !errors.As(err, &ce) || ce.StatusCode != http.StatusNotFound {
			f.mu.Unlock()
			t.Fatalf("task %s on the new primary: %v", id, err)
		}
		lost++
		if !at.After(cut) {
			lostBefore++
		}
	}
	f.mu.Unlock()
	if lostBefore > 0 {
		t.Fatalf("%d asks acknowledged before the standby was cut off are lost", lostBefore)
	}
	if lost == 0 {
		t.Fatalf("no ask of the %d acknowledged after the standby was cut off was lost: the test did not make the standby fall behind", after)
	}
	for i, p := range procs {
		waitUntil(t, fmt.Sprintf("process %d to log that the database lost events", i+1), func() bool {
			return strings.Contains(p.logText(), "the database lost events")
		})
	}
	mustCheck(t, bin, "", url)
	t.Logf("asynchronous replication, the standby cut off, then the primary stopped and the standby promoted: "+
		"%d of the %d asks acknowledged after the cut are lost (none before it); both processes logged that the database lost events "+
		"(their search indexes rebuilt); kfa check passes on the new primary", lost, after)
}
