package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/internal/pgha"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store/postgres"
)

// pair starts a primary and its synchronous standby (internal/pgha), with
// a database kfa, for t alone.
func pair(t *testing.T) (*pgha.Cluster, *pgha.Node, *pgha.Node) {
	t.Helper()
	c := pgha.ForTest(t)
	a, b, err := c.Pair(context.Background(), "kfa")
	if err != nil {
		t.Fatal(err)
	}
	return c, a, b
}

// collector is a follower that keeps the events it applied.
type collector struct {
	mu  sync.Mutex
	evs []changelog.Event
}

func (c *collector) Apply(_ context.Context, evs []changelog.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, evs...)
	return nil
}

func (c *collector) ids() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s []string
	for _, e := range c.evs {
		s = append(s, e.ID)
	}
	return strings.Join(s, ",")
}

// TestPositionsAcrossPromotion: the change log's positions (the
// appending transaction's id, then a sequence) and its readable horizon
// (pg_snapshot_xmin) carry over to a promoted standby. A follower that
// read the log on the primary goes on, after the primary crashed and the
// synchronous standby was promoted, with exactly the events written on
// the new primary, each once and in order; so does one that starts from
// a durable cursor saved on the old primary. Every position on the new
// primary is after every one on the old, and a transaction that was open
// at the crash never shows, and holds nothing back.
func TestPositionsAcrossPromotion(t *testing.T) {
	c, a, b := pair(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, c.MultiURL("kfa", a, b), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logs bytes.Buffer
	live := &collector{}
	r := changelog.NewRunner(db, live, changelog.RunnerOptions{Name: "live", Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	upsert := func(id string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := db.UpsertRecords(ctx, []knowledge.Record{{ID: id, Kind: "fix", Title: id, Body: id}}, time.Now())
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("upsert %s: %v", id, err)
			}
			time.Sleep(20 * time.Millisecond) // a client retrying while the database switches
		}
	}
	for i := 1; i <= 5; i++ {
		upsert(fmt.Sprintf("before-%d", i))
	}
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	saved := r.Position()
	// A transaction open at the crash: it appended an event (so it has a
	// transaction id, in the WAL the standby received) and never commits.
	open, err := pgx.Connect(ctx, a.URL("kfa"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.Exec(ctx, "BEGIN; INSERT INTO change_log (kind, subject, at_ms, written_ms) VALUES ('record.upserted', 'never', 0, 0)"); err != nil {
		t.Fatal(err)
	}
	// A commit after it flushes its WAL to the standby too, which then
	// knows its transaction as one still running.
	upsert("during")

	if err := a.Stop(ctx, "immediate"); err != nil {
		t.Fatal(err)
	}
	_ = open.Close(ctx)
	if err := b.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		upsert(fmt.Sprintf("after-%d", i))
	}
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	want := "before-1,before-2,before-3,before-4,before-5,during,after-1,after-2,after-3,after-4,after-5"
	if got := live.ids(); got != want {
		t.Fatalf("the follower across the promotion applied %s, want %s", got, want)
	}
	for i := 1; i < len(live.evs); i++ {
		if !live.evs[i-1].Pos.Before(live.evs[i].Pos) {
			t.Fatalf("positions do not grow across the promotion: %s then %s", live.evs[i-1].Pos, live.evs[i].Pos)
		}
	}
	if strings.Contains(logs.String(), "lost") {
		t.Fatalf("the follower thinks events were lost:\n%s", logs.String())
	}

	// From the durable cursor saved on the old primary.
	durable := &collector{}
	r2 := changelog.NewRunner(db, durable, changelog.RunnerOptions{Name: "durable",
		From: func(context.Context) (changelog.Position, error) { return saved, nil }})
	if err := r2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r2.Stop()
	if err := r2.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := durable.ids(); got != "during,after-1,after-2,after-3,after-4,after-5" {
		t.Fatalf("a follower from the cursor %s saved on the old primary applied %s", saved, got)
	}
	t.Logf("positions on the old primary up to %s, on the new one from %s", saved, durable.evs[0].Pos)
}
