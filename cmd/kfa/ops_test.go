package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/store"
)

// ownerIndexKey is a task's key in idx_task_owner: owner | ts | id.
func ownerIndexKey(t *testing.T, owner, id, ts string) []byte {
	t.Helper()
	o, err := ulid.ParseStrict(owner)
	if err != nil {
		t.Fatal(err)
	}
	i, err := ulid.ParseStrict(id)
	if err != nil {
		t.Fatal(err)
	}
	at, err := a2a.ParseTime(ts)
	if err != nil {
		t.Fatal(err)
	}
	k := append([]byte(nil), o[:]...)
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixMilli()))
	return append(k, i[:]...)
}

// TestCheckReportsCorruption writes broken entries straight into the
// bbolt file; kfa check must fail naming them, offline and through a
// server started on the damaged file.
func TestCheckReportsCorruption(t *testing.T) {
	f := newFixture(t)
	f.srv.stop()
	ghost := "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
	db, err := bolt.Open(filepath.Join(f.dir, store.FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		idx := tx.Bucket([]byte("idx_task_owner"))
		// The waiting task vanishes from its owner's index...
		if err := idx.Delete(ownerIndexKey(t, f.alice.ID, f.waiting.ID, f.waiting.Status.Timestamp)); err != nil {
			return err
		}
		// ...a task that does not exist appears in bob's...
		if err := idx.Put(ownerIndexKey(t, f.bob.ID, ghost, f.bobs.Status.Timestamp), nil); err != nil {
			return err
		}
		// ...and the agents counter is off by one.
		counts := tx.Bucket([]byte("counts"))
		n := binary.BigEndian.Uint64(counts.Get([]byte("agents")))
		return counts.Put([]byte("agents"), binary.BigEndian.AppendUint64(nil, n+1))
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}

	wantLines := []string{
		"index-missing   idx_task_owner  owner=" + f.alice.ID,
		"task=" + f.waiting.ID + "  " + f.waiting.ID + "  task " + f.waiting.ID + " (TASK_STATE_WORKING) is missing from this index",
		"index-dangling  idx_task_owner  owner=" + f.bob.ID,
		"entry points at task " + ghost + ", which does not exist",
		"counter         counts          agents",
		"counter is 5, counted 4",
		"idx_task_owner/owner=" + f.alice.ID,
		"counter is 3, counted 2",
		"idx_task_owner/owner=" + f.bob.ID,
		"counter is 1, counted 2",
	}
	assertReport := func(where string) {
		t.Helper()
		r := kfa(t, "check", "--data", f.dir)
		if r.code != 1 || !strings.HasPrefix(r.stdout, "FAILED: ") || !strings.Contains(r.stderr, "the database has problems") {
			t.Fatalf("%s: kfa check: %s", where, r)
		}
		for _, w := range wantLines {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: the report lacks %q:\n%s", where, w, r.stdout)
			}
		}
		r = kfa(t, "check", "--data", f.dir, "--json")
		if r.code != 1 {
			t.Fatalf("%s: kfa check --json: %s", where, r)
		}
		var rep api.CheckReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		kinds := map[string]int{}
		for _, v := range rep.Violations {
			kinds[v.Kind]++
			if v.Kind == "index-dangling" && (v.TaskID != ghost || v.Bucket != "idx_task_owner" || v.KeyHex == "") {
				t.Errorf("%s: dangling entry: %+v", where, v)
			}
		}
		if rep.OK || kinds["index-missing"] != 1 || kinds["index-dangling"] != 1 || kinds["counter"] != 3 || len(rep.Violations) != 5 {
			t.Errorf("%s: violations %v: %+v", where, kinds, rep.Violations)
		}
	}
	assertReport("offline")
	startServer(t, f.dir, nil)
	assertReport("through the server")
}

// TestBackupAndRestore: the copy is complete and verified, FILE is never
// clobbered by accident, and restore refuses what it must.
func TestBackupAndRestore(t *testing.T) {
	t.Parallel() // seconds of waiting on processes and I/O: overlap it with the other slow tests
	f := newFixture(t)
	dir := shortTempDir(t)
	file := filepath.Join(dir, "kfa-backup.db")

	res := decode[BackupResult](t, "backup", file, "--data", f.dir)
	if res.Source != "server" || !res.Verified || res.Bytes == 0 || len(res.SHA256) != 64 || res.File != file {
		t.Fatalf("backup from the server: %+v", res)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() != res.Bytes || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", fi, err)
	}
	golden(t, "backup", normalize(ok(t, "backup", file, "--data", f.dir, "--force", "--json"), map[string]string{dir: "<DIR>"}))
	r := kfa(t, "backup", file, "--data", f.dir)
	if r.code != 1 || !strings.Contains(r.stderr, file+" exists; pass --force to replace it") {
		t.Fatalf("backup over an existing file: %s", r)
	}
	r = kfa(t, "backup", filepath.Join(f.dir, "kfa.db"), "--data", f.dir, "--force")
	if r.code != 1 || !strings.Contains(r.stderr, "is the live database") {
		t.Fatalf("backup onto the database: %s", r)
	}
	if out := ok(t, "backup", file, "--data", f.dir, "--force"); !strings.Contains(out, "from the running server (pid ") ||
		!strings.Contains(out, "(verified)") {
		t.Fatalf("human backup: %s", out)
	}
	if leftovers, err := filepath.Glob(filepath.Join(dir, ".*tmp*")); err != nil || len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v (%v)", leftovers, err)
	}

	// Restore refuses a running server's directory.
	r = kfa(t, "restore", file, "--data", f.dir, "--force")
	if r.code != 1 || !strings.Contains(r.stderr, "kfa serve (pid ") || !strings.Contains(r.stderr, "stop it first") {
		t.Fatalf("restore onto a live server: %s", r)
	}

	// Change the data after the backup, stop, and restore over it.
	ok(t, "reply", discussionOf(t, f.waiting), "--as", f.bob.ID, "--body", "after the backup", "--data", f.dir)
	f.srv.stop()
	offline := decode[BackupResult](t, "backup", filepath.Join(dir, "offline.db"), "--data", f.dir)
	if offline.Source != "direct" || !offline.Verified {
		t.Fatalf("offline backup: %+v", offline)
	}
	r = kfa(t, "restore", file, "--data", f.dir)
	if r.code != 1 || !strings.Contains(r.stderr, "already holds a database; pass --force") {
		t.Fatalf("restore without --force: %s", r)
	}
	if err := os.MkdirAll(filepath.Join(f.dir, "index", "shard0"), 0o700); err != nil {
		t.Fatal(err)
	}
	rr := decode[RestoreResult](t, "restore", file, "--data", f.dir, "--force")
	if !rr.Check.OK || !rr.IndexRemoved || rr.Previous == "" || rr.Database != filepath.Join(f.dir, "kfa.db") {
		t.Fatalf("restore: %+v", rr)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "index")); !os.IsNotExist(err) {
		t.Fatalf("the search index survived the restore: %v", err)
	}
	if !strings.HasPrefix(filepath.Base(rr.Previous), "kfa.db.bak-") {
		t.Fatalf("old database kept as %s", rr.Previous)
	}
	// The restored file is the backup: the reply made after it is gone,
	// and the kept file still has it.
	got := decode[api.TaskDetail](t, "tasks", "show", f.waiting.ID, "--data", f.dir)
	if got.Task.State != "TASK_STATE_WORKING" {
		t.Fatalf("restored task: %+v", got.Task)
	}
	ok(t, "check", "--data", f.dir)
	old := filepath.Join(shortTempDir(t), "data")
	ok(t, "restore", rr.Previous, "--data", old)
	if got := decode[api.TaskDetail](t, "tasks", "show", f.waiting.ID, "--data", old); got.Task.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("the kept database lost the reply: %+v", got.Task)
	}

	// --keep-old=false leaves no .bak behind.
	before, err := filepath.Glob(filepath.Join(f.dir, "kfa.db.bak-*"))
	if err != nil {
		t.Fatal(err)
	}
	ok(t, "restore", file, "--data", f.dir, "--force", "--keep-old=false")
	if after, err := filepath.Glob(filepath.Join(f.dir, "kfa.db.bak-*")); err != nil || len(after) != len(before) {
		t.Fatalf("--keep-old=false kept a file: %v -> %v (%v)", before, after, err)
	}

	// Files that are not sound backups change nothing.
	digest := func() string {
		b, err := os.ReadFile(filepath.Join(f.dir, "kfa.db"))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", b)
	}
	was := digest()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	r = kfa(t, "restore", garbage, "--data", f.dir, "--force")
	if r.code != 1 || !strings.Contains(r.stderr, garbage+" is not a usable kfa backup") || strings.Contains(r.stderr, ".tmp-") {
		t.Fatalf("restore garbage: %s", r)
	}
	broken := filepath.Join(dir, "broken.db")
	copyFile(t, file, broken)
	bdb, err := bolt.Open(broken, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("counts")).Delete([]byte("agents")) }); err != nil {
		t.Fatal(err)
	}
	_ = bdb.Close()
	r = kfa(t, "restore", broken, "--data", f.dir, "--force")
	if r.code != 1 || !strings.Contains(r.stderr, "failed verification; nothing was changed") || !strings.Contains(r.stderr, "counter is missing") {
		t.Fatalf("restore a file that fails the check: %s", r)
	}
	newer := filepath.Join(dir, "newer.db")
	copyFile(t, file, newer)
	ndb, err := bolt.Open(newer, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ndb.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, uint64(store.SchemaVersion()+1)))
	}); err != nil {
		t.Fatal(err)
	}
	_ = ndb.Close()
	r = kfa(t, "restore", newer, "--data", f.dir, "--force")
	if r.code != 1 || !strings.Contains(r.stderr, "use a newer kfa") {
		t.Fatalf("restore a newer schema: %s", r)
	}
	if digest() != was {
		t.Fatal("a refused restore changed the database")
	}
	if leftovers, err := filepath.Glob(filepath.Join(f.dir, ".*tmp*")); err != nil || len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v (%v)", leftovers, err)
	}

	// Another process holding the lock (a server with its socket off)
	// is found through the lock.
	l := startServer(t, f.dir, func(c *server.Config) { c.AdminSocket = "off" })
	r = kfa(t, "restore", file, "--data", f.dir, "--force")
	if r.code != 1 || !strings.Contains(r.stderr, "is in use by another process") {
		t.Fatalf("restore under a lock: %s", r)
	}
	l.stop()
	// The server itself wrote while it ran (the federation forwarder
	// saves its cursor at the log's head when it starts without one), so
	// the file's bytes are no test here: the database must be sound.
	ok(t, "check", "--data", f.dir)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBackupUnderWriteLoad takes a hot backup while agents ask and reply
// over HTTP as fast as they can. The restored copy must pass kfa check and
// hold every task whose ask was acknowledged before the backup started.
func TestBackupUnderWriteLoad(t *testing.T) {
	t.Parallel() // seconds of waiting on processes and I/O: overlap it with the other slow tests
	dir := filepath.Join(shortTempDir(t), "data")
	l := startServer(t, dir, func(c *server.Config) { c.AskRate, c.MaxOpenTasks, c.ReplyRate = 0, 0, 0 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type acked struct {
		id string
		at time.Time // when the answer arrived
	}
	var (
		mu      sync.Mutex
		tasks   []acked
		replies atomic.Int64
		wg      sync.WaitGroup
		failed  atomic.Value
	)
	const workers = 4
	agents := make([]api.Agent, workers)
	for i := range agents {
		agents[i] = decode[api.Agent](t, "agent", "create", "--data", dir, "--name", fmt.Sprintf("load-%d", i))
	}
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			me := client.New(l.url, client.WithToken(agents[i].Token))
			other := client.New(l.url, client.WithToken(agents[(i+1)%workers].Token))
			for n := 0; ctx.Err() == nil; n++ {
				res, err := me.SendMessage(ctx, askReq(fmt.Sprintf("w%d-%d", i, n), "", fmt.Sprintf("load question %d of %d", n, i)))
				if err != nil {
					if ctx.Err() == nil {
						failed.Store(err)
					}
					return
				}
				mu.Lock()
				tasks = append(tasks, acked{res.Task.ID, time.Now()})
				mu.Unlock()
				if n%2 == 0 { // every other question gets answered by a neighbour
					if _, err := other.Reply(ctx, discussionOf(t, *res.Task), "answer"); err != nil {
						if ctx.Err() == nil {
							failed.Store(err)
						}
						return
					}
					replies.Add(1)
				}
			}
		}()
	}
	// Let the load build up, then back up in the middle of it.
	for deadline := time.Now().Add(2 * time.Minute); ; {
		mu.Lock()
		n := len(tasks)
		mu.Unlock()
		if n >= 200 || failed.Load() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d asks acknowledged after 2 minutes of load, want 200", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	before := make([]acked, len(tasks))
	copy(before, tasks)
	mu.Unlock()
	start := time.Now()
	file := filepath.Join(shortTempDir(t), "hot.db")
	r := kfa(t, "backup", file, "--data", dir, "--json")
	mu.Lock()
	during := len(tasks) - len(before)
	mu.Unlock()
	cancel()
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("load: %v", err)
	}
	if r.code != 0 {
		t.Fatalf("backup under load: %s", r)
	}
	t.Logf("backup of %d acknowledged tasks took %s while %d more were acknowledged (%d replies in all)",
		len(before), time.Since(start).Round(time.Millisecond), during, replies.Load())

	restored := filepath.Join(shortTempDir(t), "data")
	ok(t, "restore", file, "--data", restored)
	if out := ok(t, "check", "--data", restored); !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("check of the restored copy: %s", out)
	}
	db, err := store.Open(filepath.Join(restored, store.FileName), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, a := range before {
		if !a.at.Before(start) {
			t.Fatalf("bookkeeping: task %s acknowledged after the backup began", a.id)
		}
		if _, err := db.GetTask(context.Background(), "", a.id); err != nil {
			t.Errorf("task %s, acknowledged before the backup began, is not in it: %v", a.id, err)
		}
	}
	st, err := db.Stats()
	if err != nil || st.Tasks < len(before) {
		t.Fatalf("restored stats: %+v %v", st, err)
	}
}
