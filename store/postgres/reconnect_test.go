package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store/postgres"
)

// TestPoolResetsWhenTheServerGoes: the server closes every connection (it
// stopped, or a failover cut them): the first request that meets one
// fails, and the pool drops the others with it, so that the requests
// right after it connect afresh instead of each failing on a dead
// connection of its own.
func TestPoolResetsWhenTheServerGoes(t *testing.T) {
	proxy, url := pgtest.NewProxy(t, pgtest.URL(t))
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.OpenConns(ctx, 4); err != nil || n != 4 {
		t.Fatalf("the pool holds %d connections (%v), want 4", n, err)
	}
	proxy.CloseAll()
	failed := 0
	for i := range 8 {
		if err := db.Ping(); err != nil {
			failed++
			if i > 0 {
				t.Fatalf("request %d failed too (%v): the pool kept dead connections", i+1, err)
			}
		}
	}
	t.Logf("%d of 8 requests failed after the server closed every connection", failed)
}

// TestListenerNoticesASilentServer: the server of the log's listener goes
// silent without closing the connection (a machine down, a network cut):
// the listener notices when its idle wait ends and a ping gets no answer,
// reconnects, and hears the next writes of another process.
func TestListenerNoticesASilentServer(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	ctx := context.Background()
	a, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, direct, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	wake, stop := a.WakeLog()
	defer stop()
	proxy.Freeze()
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		// B writes until A hears of it: its old listening connection
		// never answers again.
		if _, err := b.UpsertRecords(ctx, []knowledge.Record{{ID: "r", Kind: "fix", Title: "t", Body: "b"}}, time.Now()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wake:
			t.Logf("A heard B's writes again %s after its server went silent", time.Since(start).Round(time.Millisecond))
			proxy.Close() // the frozen connections end, so that A closes at once
			return
		case <-tick.C:
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("A's listener never came back after its server went silent")
		}
	}
}
