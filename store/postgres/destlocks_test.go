package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/postgres"
)

// openTwo opens two stores on one database, as two processes would.
func openTwo(t *testing.T) (url string, a, b *postgres.DB) {
	t.Helper()
	url = pgtest.URL(t)
	for _, p := range []**postgres.DB{&a, &b} {
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		*p = db
	}
	return url, a, b
}

func openLocks(t *testing.T, db *postgres.DB) push.DestinationLocks {
	t.Helper()
	l, err := db.DestinationLocks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// TestDestinationLocks: a destination is locked by one process's sender
// at a time; unlocking, closing, or the session dying frees it, and a
// sender whose session died sees that it no longer holds its locks.
func TestDestinationLocks(t *testing.T) {
	url, db1, db2 := openTwo(t)
	ctx := context.Background()
	const a, b, c = "https://a.example.com:443", "https://b.example.com:443", "https://c.example.com:443"
	l1, l2 := openLocks(t, db1), openLocks(t, db2)
	try := func(l push.DestinationLocks, dest string, want bool, what string) {
		t.Helper()
		got, err := l.TryLock(ctx, dest)
		if err != nil || got != want {
			t.Fatalf("%s: locked %v, %v; want %v", what, got, err, want)
		}
	}
	try(l1, a, true, "the first lock of a")
	if !l1.Held(a) || l1.Held(b) {
		t.Fatal("held: a should be, b not")
	}
	try(l2, a, false, "a, held by the other process")
	try(l2, b, true, "b, held by nobody")
	if err := l1.Unlock(ctx, a); err != nil {
		t.Fatal(err)
	}
	if l1.Held(a) {
		t.Fatal("a is held after its unlock")
	}
	try(l2, a, true, "a, once unlocked")
	try(l1, a, false, "a, held by the other process now")
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	try(l1, a, true, "a, once the other process's locks closed")
	try(l1, b, true, "b, once the other process's locks closed")

	// The session dies (the database ended it, or the process was
	// killed): its locks are free at once, and its sender sees so.
	l3 := openLocks(t, db2)
	try(l3, c, true, "c")
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// pg_locks is the whole server's: the database and the keys name c's
	// lock alone, whatever else runs. The timeout waits for the end.
	classid, objid := postgres.DestLockKeys(c)
	var ended int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid::bigint = $1 AND objid::bigint = $2
		  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, classid, objid).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("end the session holding c: %d %v", ended, err)
	}
	try(l1, c, true, "c, once its session ended")
	deadline := time.Now().Add(30 * time.Second)
	for l3.Held(c) {
		if time.Now().After(deadline) {
			t.Fatal("the sender whose session ended still thinks it holds c after 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := l3.Unlock(ctx, c); err != nil {
		t.Fatalf("unlock of a lock the ended session lost: %v", err)
	}
	try(l3, b, false, "b, held by the first process, from a new session")
	if err := l1.Unlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	try(l3, b, true, "b, from a new session")
}
