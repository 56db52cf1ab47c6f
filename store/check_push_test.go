package store

import (
	"context"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/tasks"
)

// pushWorld is the check world with push state: a waiting task with two
// configs, one canceled with a config and a pending delivery.
type pushWorld struct {
	*world
	pending push.Delivery
}

func newPushWorld(t *testing.T) *pushWorld {
	t.Helper()
	w := newWorld(t)
	ctx := context.Background()
	ps := push.NewService(w.db, push.Policy{}, w.db.Secret(), time.Now)
	fresh := func(msgID string) string {
		t.Helper()
		res, err := w.db.CreateAsk(ctx, askFor(w.alice.ID, w.alice.Name, msgID))
		tk := res.Task
		if err != nil {
			t.Fatal(err)
		}
		return tk.ID
	}
	waiting, canceled := fresh("m-push-1"), fresh("m-push-2")
	for _, c := range []struct{ task, id string }{{waiting, "a"}, {waiting, "b"}, {canceled, "c"}} {
		if _, err := ps.Create(ctx, w.alice.ID, c.task, pushCfg(c.id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.db.CancelTask(ctx, w.alice.ID, canceled, time.Now()); err != nil {
		t.Fatal(err)
	}
	page, err := w.db.Deliveries(ctx, push.DeliveryQuery{TaskID: canceled, PageSize: 10})
	if err != nil || len(page.Deliveries) != 1 {
		t.Fatalf("deliveries: %+v %v", page, err)
	}
	return &pushWorld{world: w, pending: page.Deliveries[0]}
}

func TestCheckPush(t *testing.T) {
	if rep := newPushWorld(t).check(t); !rep.OK() || rep.Examined["push_outbox"] != 1 || rep.Examined["push_configs"] != 3 {
		t.Fatalf("a store with push state written by the services: %+v %v", rep.Violations, rep.Examined)
	}
	for _, tc := range []struct {
		name   string
		break_ func(w *pushWorld) func(tx *bolt.Tx) error
		detail []string
	}{
		{"pending delivery without its config", func(w *pushWorld) func(tx *bolt.Tx) error {
			tk, _ := idBytes(w.pending.TaskID)
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketPushConfigs).Delete(pushConfigKey(tk, w.pending.ConfigID))
			}
		}, []string{"points at config"}},
		{"pending delivery missing from the due index", func(w *pushWorld) func(tx *bolt.Tx) error {
			id, _ := idBytes(w.pending.ID)
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketPushDue).Delete(dueKey(w.pending.NextAt, id)) }
		}, []string{"missing from the due index"}},
		{"due entry of nothing", func(w *pushWorld) func(tx *bolt.Tx) error {
			id, _ := idBytes(w.waiting.ID)
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketPushDue).Put(dueKey(time.Now(), id), nil) }
		}, []string{"due entry points at a delivery that is missing"}},
		{"pending delivery missing from the due index by destination", func(w *pushWorld) func(tx *bolt.Tx) error {
			id, _ := idBytes(w.pending.ID)
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketPushDest).Delete(destKey(w.pending.Destination, w.pending.NextAt, id))
			}
		}, []string{"missing from the due index by destination"}},
		{"due entry by destination naming another destination", func(w *pushWorld) func(tx *bolt.Tx) error {
			id, _ := idBytes(w.pending.ID)
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketPushDest).Put(destKey("https://elsewhere.example.com:443", w.pending.NextAt, id), nil)
			}
		}, []string{`due entry of destination "https://elsewhere.example.com:443" points at a delivery that is missing, not pending, due at another time or to another destination`}},
		{"malformed due entry by destination", func(w *pushWorld) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketPushDest).Put([]byte("no separator"), nil) }
		}, []string{"key is not destination | 0 | time | delivery id"}},
		{"queue depth off", func(w *pushWorld) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error { return counter(tx.Bucket(bucketCounts), pushPendingKey, 2) }
		}, []string{"counter is 3, counted 1 pending"}},
		{"delivery in the wrong state entry", func(w *pushWorld) func(tx *bolt.Tx) error {
			id, _ := idBytes(w.pending.ID)
			return func(tx *bolt.Tx) error {
				if err := tx.Bucket(bucketPushByState).Delete(cat([]byte{'p'}, id)); err != nil {
					return err
				}
				return tx.Bucket(bucketPushByState).Put(cat([]byte{'d'}, id), nil)
			}
		}, []string{"missing from the state index", "in another state"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPushWorld(t)
			w.mutate(t, tc.break_(w))
			rep := w.check(t)
			var all []string
			for _, v := range rep.Violations {
				all = append(all, v.Kind+": "+v.Detail)
			}
			for _, d := range tc.detail {
				if !strings.Contains(strings.Join(all, "\n"), d) {
					t.Errorf("no violation says %q: %v", d, all)
				}
			}
		})
	}
}

// askFor is an ask by the agent, built as the service builds one.
func askFor(ownerID, name, msgID string) tasks.CreateAsk {
	text := "q " + msgID
	return tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: ownerID, Name: name}, Question: text,
		Message: a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}, time.Now(), 0)
}

func pushCfg(id string) a2a.TaskPushNotificationConfig {
	return a2a.TaskPushNotificationConfig{ID: id, URL: "https://hooks.example.com/" + id}
}

// TestPushReadsWriteNothing: the worker's idle work (due deliveries, the
// next due time, a purge with nothing to purge) and the config reads
// leave the file byte for byte as it was.
func TestPushReadsWriteNothing(t *testing.T) {
	w := newPushWorld(t)
	ctx := context.Background()
	before, err := w.db.Digest()
	if err != nil {
		t.Fatal(err)
	}
	_, txs, _ := w.db.CommitCountsForTest()
	if n, err := w.db.PurgeDeliveries(ctx, time.Now().Add(-time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("purge: %d %v", n, err)
	}
	dests, _, err := w.db.DueDestinations(ctx, push.DueQuery{Now: time.Now(), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dests {
		if _, err := w.db.DueDeliveries(ctx, d, time.Now(), 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.db.NextDue(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.PushConfigs(ctx, w.alice.ID, w.pending.TaskID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.DeletePushConfig(ctx, w.alice.ID, w.pending.TaskID, "no-such-config", time.Now()); err != nil {
		t.Fatal(err)
	}
	if after, err := w.db.Digest(); err != nil || after != before {
		t.Fatalf("reads changed the file (%v)", err)
	}
	if _, after, _ := w.db.CommitCountsForTest(); after != txs {
		t.Fatalf("reads began %d write transactions", after-txs)
	}
}
