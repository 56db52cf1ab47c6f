package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/store/transfer"
)

// TestRequireSyncReplica: on a primary without a synchronous standby (the
// test server has none), a store that requires one refuses every write a
// client would be told of, an ask, a push claim, before it begins, with an
// unavailable error that says why and names no host, and fails Ping; it
// still records a push attempt already made (refusing it would only have
// the delivery sent again) and opens (its first signing key). A store
// that does not require one writes.
func TestRequireSyncReplica(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	d := push.Delivery{ID: "01JD0000000000000000000D02", TaskID: "01JD0000000000000000000T02", ConfigID: "c", OwnerID: "01JD0000000000000000000A02",
		Destination: "https://hooks.example.com:443", State: push.Pending, Event: []byte(`{}`), CreatedAt: now, NextAt: now}
	plain, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.Load(ctx, &transfer.Data{Secret: []byte("require-sync-secret-0123456789ab"),
		PushConfigs: []push.Config{{ID: "c", TaskID: d.TaskID, OwnerID: d.OwnerID, URL: d.Destination + "/hook", CreatedAt: now}},
		Deliveries:  []push.Delivery{d}}); err != nil {
		t.Fatal(err)
	}
	if r := plain.Replication(); r.Safe() || r.Why() != "no standby is streaming from the primary" {
		t.Fatalf("replication of a server without standbys: %+v, %q", r, r.Why())
	}

	strict, err := postgres.Open(ctx, url, postgres.Options{RequireSyncReplica: true})
	if err != nil {
		t.Fatalf("a store requiring a synchronous standby does not open without one: %v", err)
	}
	defer strict.Close()
	refused := func(what string, err error) {
		t.Helper()
		var u interface {
			Unavailable() bool
			WritesRefused() string
		}
		if !errors.Is(err, postgres.ErrNoSyncReplica) || !errors.As(err, &u) || !u.Unavailable() ||
			u.WritesRefused() != "no standby is streaming from the primary" {
			t.Fatalf("%s without a synchronous standby: %v, want it refused, saying why", what, err)
		}
	}
	e := newEngine(t, strict)
	if _, err := e.ag.Create(ctx, "alice", []agents.Scope{agents.ScopePost}); err == nil {
		t.Fatal("an agent created without a synchronous standby")
	} else {
		refused("an agent's creation", err)
	}
	_, err = strict.Claim(ctx, d.ID, now, now.Add(time.Minute))
	refused("a push claim", err)
	refused("Ping", strict.Ping())
	rec, err := strict.RecordAttempt(ctx, d.ID, push.Attempt{N: 1, At: now, Status: 204, Outcome: push.OutcomeDelivered})
	if err != nil || rec.State != push.Delivered {
		t.Fatalf("an attempt made, recorded without a synchronous standby: %+v %v; want it recorded", rec, err)
	}
	if _, err := newEngine(t, plain).ag.Create(ctx, "bob", []agents.Scope{agents.ScopePost}); err != nil {
		t.Fatalf("a store that does not require a standby: %v", err)
	}
}
