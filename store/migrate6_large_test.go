package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/tasks"
)

// Migration 6 on a large file, on demand (minutes, gigabytes of disk):
//
//	KFA_MIGRATE_TASKS=1000000 go test -count=1 -v -run TestMigration6Large ./store
//
// builds a schema-5 file of that many tasks from 100 agents, then opens it
// in a child process (the migration), and reports the child's wall time,
// peak Go heap and peak RSS (the RSS counts the mapped file's pages it
// read).
func TestMigration6Large(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KFA_MIGRATE_TASKS"))
	if path := os.Getenv("KFA_MIGRATE_CHILD"); path != "" {
		migrateChild(t, path)
		return
	}
	if n <= 0 {
		t.Skip("on demand: KFA_MIGRATE_TASKS=N builds an N-task file and times migration 6 on it (1M: minutes, 2 GiB of disk); TestMigration6OneContextIndex covers the migration (fresh, and resumed after a crash at each step) at a small size in every run")
	}
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(path, Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var owners []agents.Agent
	for i := range 100 {
		a := agents.Agent{ID: fmt.Sprintf("01JD00000000000000000000%02d", i), Name: fmt.Sprint("agent", i),
			Scopes: []agents.Scope{agents.ScopePost}, CreatedAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
		if err := db.CreateAgent(t.Context(), agents.Create{Agent: a, Credential: agents.Credential{Digest: agents.DigestOf(a.Name), AgentID: a.ID, CreatedAt: a.CreatedAt}}); err != nil {
			t.Fatal(err)
		}
		owners = append(owners, a)
	}
	const chunk = 20000
	for lo := 0; lo < n; lo += chunk {
		asks := make([]tasks.CreateAsk, 0, chunk)
		for i := lo; i < min(lo+chunk, n); i++ {
			a := owners[i%len(owners)]
			text := "How do I keep an A2A task open across a server restart? " + strconv.Itoa(i)
			asks = append(asks, tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: a.ID, Name: a.Name}, Question: text,
				Message: a2a.Message{MessageID: "m" + strconv.Itoa(i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}},
				owners[0].CreatedAt.Add(time.Duration(i)*time.Millisecond), 0))
		}
		if err := db.LoadAsks(asks); err != nil {
			t.Fatal(err)
		}
	}
	if err := downgradeTo5(db.db); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	t.Logf("built a schema-5 file of %d tasks (%d MiB) in %s", n, st.Size()>>20, time.Since(start).Round(time.Second))

	cmd := exec.Command(os.Args[0], "-test.run=^TestMigration6Large$", "-test.v")
	cmd.Env = append(os.Environ(), "KFA_MIGRATE_CHILD="+path)
	start = time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss >> 10 // KiB on Linux
	}
	st, _ = os.Stat(path)
	t.Logf("child (open and migrate): wall %s, peak RSS %d MiB, file now %d MiB\n%s", wall.Round(time.Millisecond), rss, st.Size()>>20, out)
}

// migrateChild opens (migrates) the file at path, sampling the Go heap.
func migrateChild(t *testing.T, path string) {
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var top uint64
		var ms runtime.MemStats
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapInuse)
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	db, err := Open(path, Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	close(stop)
	heap := <-peak
	defer db.Close()
	var v int
	_ = db.db.View(func(tx *bolt.Tx) error { v = schemaOf(tx); return nil })
	if v != 6 {
		t.Fatalf("schema %d after the migration", v)
	}
	bs := db.BoltStats()
	t.Logf("migration: %s, peak Go heap in use %d MiB; %d free pages after it (a freelist of %d KiB, written by every commit until growth reuses them)",
		took.Round(time.Millisecond), heap>>20, bs.FreePages, bs.FreelistBytes>>10)
}
