package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/webhook"
)

// TestWorkerClaimsBeforeSending: on an outbox several processes share
// (PostgreSQL), a delivery in flight is claimed: another process does
// not read it as due, even past the destination's lock (which a failover
// ends while the request is out), until the attempt is recorded.
func TestWorkerClaimsBeforeSending(t *testing.T) {
	tr := newTracker(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	rcv := tr.receiver("a", func() {
		close(arrived)
		<-release
	})
	d, ids := outboxData(time.Now().Add(-time.Minute), floodSpec{rcv.URL + "/a", 1})
	dbs := backends[1].open(t, d, 2)
	done := make(chan struct{})
	obs := observerFunc(func(push.Delivery, push.Attempt) { close(done) })
	w := newWorker(t, dbs[0], webhook.Config{Observer: obs}, "p1")
	w.Start(context.Background())
	within(t, 10*time.Second, "the request", arrived)
	due, err := dbs[1].DueDeliveries(context.Background(), push.Destination(rcv.URL), time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 0 {
		close(release)
		t.Fatalf("the other process reads %d deliveries due (%v) while one is in flight; want none", len(due), err)
	}
	close(release)
	within(t, 10*time.Second, "the attempt's record", done)
	for id := range ids {
		dl, err := dbs[1].Delivery(context.Background(), id)
		if err != nil || dl.State != push.Delivered || dl.Attempts != 1 {
			t.Fatalf("after its record: %+v %v", dl, err)
		}
	}
}
