package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/transfer"
)

// TestClaimOutlivesTheLocks: process A claims a delivery and sends it;
// then its lock session ends (as every session does in a failover) before
// it has recorded the attempt. Process B takes the destination's lock, and
// does not read the delivery as due: the claim holds until A records the
// attempt, which ends it, or until it expires. A claim is taken once.
func TestClaimOutlivesTheLocks(t *testing.T) {
	_, a, b := openTwo(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	const dest = "https://hooks.example.com:443"
	d := push.Delivery{ID: "01JD0000000000000000000D01", TaskID: "01JD0000000000000000000T01", ConfigID: "c", OwnerID: "01JD0000000000000000000A01",
		Destination: dest, State: push.Pending, Event: []byte(`{}`), CreatedAt: now.Add(-time.Minute), NextAt: now.Add(-time.Second)}
	if err := a.Load(ctx, &transfer.Data{Secret: []byte("claim-test-secret-0123456789abcd"),
		PushConfigs: []push.Config{{ID: "c", TaskID: d.TaskID, OwnerID: d.OwnerID, URL: dest + "/hook", CreatedAt: d.CreatedAt}},
		Deliveries:  []push.Delivery{d}}); err != nil {
		t.Fatal(err)
	}
	la := openLocks(t, a)
	if ok, err := la.TryLock(ctx, dest); !ok || err != nil {
		t.Fatalf("A locks the destination: %v %v", ok, err)
	}
	until := now.Add(15 * time.Second)
	if ok, err := a.Claim(ctx, d.ID, now, until); !ok || err != nil {
		t.Fatalf("A claims the delivery: %v %v", ok, err)
	}
	if ok, err := b.Claim(ctx, d.ID, now, until); ok || err != nil {
		t.Fatalf("B claims it too: %v %v, want false", ok, err)
	}
	// A's lock session ends while its request is in flight.
	if err := la.Close(); err != nil {
		t.Fatal(err)
	}
	lb := openLocks(t, b)
	if ok, err := lb.TryLock(ctx, dest); !ok || err != nil {
		t.Fatalf("B locks the destination once A's session ended: %v %v", ok, err)
	}
	due, err := b.DueDeliveries(ctx, dest, now.Add(time.Second), 10)
	if err != nil || len(due) != 0 {
		t.Fatalf("B reads %d deliveries due (%v) while A's claim holds; want none", len(due), err)
	}
	if at, ok, err := b.NextDue(ctx); err != nil || !ok || !at.Equal(until) {
		t.Fatalf("next due %v %v %v; want the claim's end, %v", at, ok, err, until)
	}
	if due, _ := b.DueDeliveries(ctx, dest, until, 10); len(due) != 1 {
		t.Fatalf("%d due once the claim expired, want 1 (a sender that died is sent again)", len(due))
	}
	// A records its attempt: the claim ends, the delivery is delivered.
	rec, err := a.RecordAttempt(ctx, d.ID, push.Attempt{N: 1, At: now, Status: 204, Outcome: push.OutcomeDelivered})
	if err != nil || rec.State != push.Delivered {
		t.Fatalf("A records its attempt: %+v %v", rec, err)
	}
	if due, _ := b.DueDeliveries(ctx, dest, until, 10); len(due) != 0 {
		t.Fatalf("%d due after A's record, want none", len(due))
	}
	if ok, err := b.Claim(ctx, d.ID, until, until.Add(time.Minute)); ok || err != nil {
		t.Fatalf("a delivered delivery claimed: %v %v", ok, err)
	}
}
