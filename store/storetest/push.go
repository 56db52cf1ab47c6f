package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/tasks"
)

// pushEnv is env with the push config service.
type pushEnv struct {
	*env
	ps *push.Service
}

func newPushEnv(t *testing.T, open Opener) *pushEnv {
	t.Helper()
	e := newEnv(t, open, tasks.Limits{})
	return &pushEnv{env: e, ps: push.NewService(e.store, push.Policy{}, []byte(envSecret), e.clock.Now)}
}

func (e *pushEnv) config(t *testing.T, a agents.Agent, taskID, id, url string) push.Config {
	t.Helper()
	c, err := e.ps.Create(context.Background(), a.ID, taskID, a2a.TaskPushNotificationConfig{ID: id, URL: url, Token: "tok-" + id})
	if err != nil {
		t.Fatalf("config %s on %s: %v", id, taskID, err)
	}
	return c
}

func testPushConfigs(t *testing.T, open Opener) {
	e := newPushEnv(t, open)
	ctx := context.Background()
	a, b := e.agent(t, "alice"), e.agent(t, "bob")
	tk := e.ask(t, a, "m1")

	e.config(t, a, tk.ID, "b", "https://hooks.example.com/b")
	first := e.config(t, a, tk.ID, "a", "https://hooks.example.com/a")
	if first.TaskID != tk.ID || first.OwnerID != a.ID || first.Token != "tok-a" {
		t.Fatalf("stored config: %+v", first)
	}
	all, err := e.store.PushConfigs(ctx, a.ID, tk.ID)
	if err != nil || len(all) != 2 || all[0].ID != "a" || all[1].ID != "b" {
		t.Fatalf("configs in id order: %+v %v", all, err)
	}
	if _, err := e.store.PushConfigs(ctx, "", tk.ID); err != nil {
		t.Fatalf("any owner: %v", err)
	}
	// Another agent's task is a missing one, for every call.
	for what, err := range map[string]error{
		"list": func() error { _, err := e.store.PushConfigs(ctx, b.ID, tk.ID); return err }(),
		"put": func() error {
			_, _, err := e.store.PutPushConfig(ctx, push.Config{ID: "x", TaskID: tk.ID, OwnerID: b.ID, URL: "https://x.example/"}, 10)
			return err
		}(),
		"delete": func() error { _, err := e.store.DeletePushConfig(ctx, b.ID, tk.ID, "a", e.clock.Now()); return err }(),
		"missing task": func() error {
			_, err := e.store.PushConfigs(ctx, a.ID, "01JD0000000000000000000000")
			return err
		}(),
		"malformed task": func() error { _, err := e.store.PushConfigs(ctx, a.ID, "nope"); return err }(),
	} {
		if !isErr(err, push.ErrTaskNotFound) {
			t.Errorf("%s: %v, want ErrTaskNotFound", what, err)
		}
	}
	// The bound counts configs, not replacements.
	for i := 3; i <= 4; i++ {
		e.config(t, a, tk.ID, fmt.Sprint(i), "https://hooks.example.com/")
	}
	if _, _, err := e.store.PutPushConfig(ctx, push.Config{ID: "5", TaskID: tk.ID, OwnerID: a.ID, URL: "https://x.example/"}, 4); !isErr(err, push.ErrTooManyConfigs) {
		t.Fatalf("over the bound: %v", err)
	}
	stored, created, err := e.store.PutPushConfig(ctx, push.Config{ID: "a", TaskID: tk.ID, OwnerID: a.ID, URL: "https://x.example/new"}, 4)
	if err != nil || created || stored.URL != "https://x.example/new" {
		t.Fatalf("a replacement at the bound: %+v %v %v", stored, created, err)
	}
	// Delete is idempotent.
	for i, want := range []bool{true, false} {
		deleted, err := e.store.DeletePushConfig(ctx, a.ID, tk.ID, "b", e.clock.Now())
		if err != nil || deleted != want {
			t.Fatalf("delete %d: %v %v", i, deleted, err)
		}
	}
	// A task that will not change again takes no config.
	if _, _, err := e.tk.Cancel(ctx, a.ID, tk.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.store.PutPushConfig(ctx, push.Config{ID: "late", TaskID: tk.ID, OwnerID: a.ID, URL: "https://x.example/"}, 10); !isErr(err, push.ErrTaskTerminal) {
		t.Fatalf("config on a canceled task: %v", err)
	}
}

// deliveriesOf lists a task's deliveries, newest first.
func deliveriesOf(t *testing.T, s Store, taskID string) []push.Delivery {
	t.Helper()
	page, err := s.Deliveries(context.Background(), push.DeliveryQuery{TaskID: taskID, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Deliveries
}

func testPushOutbox(t *testing.T, open Opener) {
	e := newPushEnv(t, open)
	ctx := context.Background()
	a, b, c := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")

	// An ask with an inline config; a join with two; one without any.
	in := askInput(a, "m1", "pushed question")
	inline, err := e.ps.Validate(a2a.TaskPushNotificationConfig{URL: "https://hooks.example.com/inline"}, "")
	if err != nil {
		t.Fatal(err)
	}
	in.Push = &inline
	asked, _, err := e.tk.Ask(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	joined := e.join(t, c, "m2", asked.DiscussionID)
	e.config(t, c, joined.ID, "c1", "https://one.example.com/")
	e.config(t, c, joined.ID, "c2", "https://two.example.com/")
	plain := e.ask(t, a, "m3")
	if got := deliveriesOf(t, e.store, asked.ID); len(got) != 0 {
		t.Fatalf("deliveries before any transition: %+v", got)
	}

	// The reply completes both tasks: one delivery per config, due at
	// the transition, in the reply's transaction.
	e.clock.Advance(time.Second)
	res := e.reply(t, b, asked.DiscussionID, "the answer")
	if len(res.CompletedTaskIDs) != 2 {
		t.Fatalf("completed: %v", res.CompletedTaskIDs)
	}
	mine := deliveriesOf(t, e.store, asked.ID)
	theirs := deliveriesOf(t, e.store, joined.ID)
	if len(mine) != 1 || len(theirs) != 2 {
		t.Fatalf("deliveries: %d and %d", len(mine), len(theirs))
	}
	d := mine[0]
	if d.State != push.Pending || d.ConfigID != inline.ID || d.OwnerID != a.ID || !d.CreatedAt.Equal(e.clock.Now()) ||
		!d.NextAt.Equal(d.CreatedAt) || d.Destination != "https://hooks.example.com:443" || len(d.Event) == 0 {
		t.Fatalf("delivery: %+v", d)
	}
	var ev a2a.StreamResponse
	if err := jsonUnmarshal(d.Event, &ev); err != nil || ev.StatusUpdate == nil || ev.StatusUpdate.TaskID != asked.ID ||
		ev.StatusUpdate.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("event: %s %v", d.Event, err)
	}
	if got := deliveriesOf(t, e.store, plain.ID); len(got) != 0 {
		t.Fatalf("a task without configs got deliveries: %+v", got)
	}
	st, err := e.store.OutboxStats(ctx)
	if err != nil || st.Pending != 3 || !st.OldestPending.Equal(e.clock.Now()) {
		t.Fatalf("stats: %+v %v", st, err)
	}
	if _, ok, _ := e.store.NextDue(ctx); !ok {
		t.Fatal("nothing due")
	}
	if due := dueAll(t, e.store, e.clock.Now()); len(due) != 3 {
		t.Fatalf("due: %d", len(due))
	}
	if due2 := dueAll(t, e.store, e.clock.Now().Add(-time.Millisecond)); len(due2) != 0 {
		t.Fatalf("due before the transition: %d", len(due2))
	}
	one, err := e.store.DueDeliveries(ctx, "https://one.example.com:443", e.clock.Now(), 10)
	if err != nil || len(one) != 1 || one[0].ConfigID != "c1" {
		t.Fatalf("due to one destination: %+v %v", one, err)
	}
	if two, _, _ := e.store.DueDestinations(ctx, push.DueQuery{Now: e.clock.Now(), Limit: 2}); len(two) != 2 {
		t.Fatalf("due, at most 2 destinations: %d", len(two))
	}

	// A retry moves it later; delivered, it is due no more and takes no
	// other attempt.
	now := e.clock.Now()
	r1, err := e.store.RecordAttempt(ctx, d.ID, push.Attempt{N: 1, At: now, Status: 503, Outcome: push.OutcomeRetry, NextAt: now.Add(time.Minute)})
	if err != nil || r1.State != push.Pending || r1.Attempts != 1 || !r1.NextAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("retry: %+v %v", r1, err)
	}
	// The same attempt recorded again (its first record's COMMIT went
	// unanswered, and the worker tried again) is counted once.
	if again, err := e.store.RecordAttempt(ctx, d.ID, push.Attempt{N: 1, At: now, Status: 503, Outcome: push.OutcomeRetry, NextAt: now.Add(time.Minute)}); err != nil ||
		again.Attempts != 1 || len(again.Recent) != 1 || again.State != push.Pending {
		t.Fatalf("the first attempt recorded again: %+v %v, want it counted once", again, err)
	}
	if due := dueAll(t, e.store, now); len(due) != 2 {
		t.Fatalf("due after a retry: %d", len(due))
	}
	r2, err := e.store.RecordAttempt(ctx, d.ID, push.Attempt{N: 2, At: now.Add(time.Minute), Status: 200, Outcome: push.OutcomeDelivered})
	if err != nil || r2.State != push.Delivered || r2.Attempts != 2 || len(r2.Recent) != 2 || !r2.FinishedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("delivered: %+v %v", r2, err)
	}
	if again, err := e.store.RecordAttempt(ctx, d.ID, push.Attempt{N: 2, At: now.Add(time.Minute), Status: 200, Outcome: push.OutcomeDelivered}); err != nil ||
		again.State != push.Delivered || again.Attempts != 2 {
		t.Fatalf("the delivering attempt recorded again: %+v %v, want the delivery as it is", again, err)
	}
	if _, err := e.store.RecordAttempt(ctx, d.ID, push.Attempt{At: now, Outcome: push.OutcomeDelivered}); !isErr(err, push.ErrNotPending) {
		t.Fatalf("an attempt on a delivered one: %v", err)
	}
	if _, err := e.store.RetryDelivery(ctx, d.ID, now); !isErr(err, push.ErrNotFailed) {
		t.Fatalf("retrying a delivered one: %v", err)
	}

	// Deleting a config fails its pending delivery; the other stays.
	if _, err := e.store.DeletePushConfig(ctx, c.ID, joined.ID, "c1", now); err != nil {
		t.Fatal(err)
	}
	for _, dl := range deliveriesOf(t, e.store, joined.ID) {
		if want := map[string]push.State{"c1": push.Failed, "c2": push.Pending}[dl.ConfigID]; dl.State != want {
			t.Fatalf("after deleting c1: %s is %s", dl.ConfigID, dl.State)
		}
	}
	// A failed delivery is retried by the operator only while its config
	// exists.
	var c1, c2 push.Delivery
	for _, dl := range deliveriesOf(t, e.store, joined.ID) {
		if dl.ConfigID == "c1" {
			c1 = dl
		} else {
			c2 = dl
		}
	}
	if _, err := e.store.RetryDelivery(ctx, c1.ID, now); !isErr(err, push.ErrNotFound) {
		t.Fatalf("retrying the deleted config's delivery: %v", err)
	}
	failed, err := e.store.RecordAttempt(ctx, c2.ID, push.Attempt{At: now, Status: 410, Error: "gone", Outcome: push.OutcomeFailed})
	if err != nil || failed.State != push.Failed || failed.Reason != "gone" {
		t.Fatalf("failed: %+v %v", failed, err)
	}
	later := now.Add(time.Hour)
	again, err := e.store.RetryDelivery(ctx, c2.ID, later)
	if err != nil || again.State != push.Pending || !again.NextAt.Equal(later) || !again.RetryFrom().Equal(later) || again.Attempts != 1 {
		t.Fatalf("operator retry: %+v %v", again, err)
	}

	// Listings: by state, newest first, in pages.
	page, err := e.store.Deliveries(ctx, push.DeliveryQuery{State: push.Failed, PageSize: 10})
	if err != nil || len(page.Deliveries) != 1 || page.Deliveries[0].ID != c1.ID {
		t.Fatalf("failed ones: %+v %v", page, err)
	}
	p1, err := e.store.Deliveries(ctx, push.DeliveryQuery{PageSize: 2})
	if err != nil || len(p1.Deliveries) != 2 || p1.Next == "" {
		t.Fatalf("page 1: %+v %v", p1, err)
	}
	p2, err := e.store.Deliveries(ctx, push.DeliveryQuery{PageSize: 2, After: p1.Next})
	if err != nil || len(p2.Deliveries) != 1 || p2.Next != "" || p2.Deliveries[0].ID == p1.Deliveries[1].ID {
		t.Fatalf("page 2: %+v %v", p2, err)
	}

	// Purging drops what finished before the cut, and nothing pending.
	n, err := e.store.PurgeDeliveries(ctx, now.Add(30*time.Second), 100)
	if err != nil || n != 1 { // c1, failed at now; d was delivered a minute later
		t.Fatalf("purge: %d %v", n, err)
	}
	n, err = e.store.PurgeDeliveries(ctx, later.Add(time.Hour), 100)
	if err != nil || n != 1 { // d; c2 is pending again
		t.Fatalf("purge 2: %d %v", n, err)
	}
	st, err = e.store.OutboxStats(ctx)
	if err != nil || st.Pending != 1 {
		t.Fatalf("stats after purge: %+v %v", st, err)
	}
}

func testPushCancel(t *testing.T, open Opener) {
	e := newPushEnv(t, open)
	ctx := context.Background()
	a := e.agent(t, "alice")
	tk := e.ask(t, a, "m1")
	e.config(t, a, tk.ID, "only", "https://hooks.example.com/")
	e.clock.Advance(time.Second)
	if _, _, err := e.tk.Cancel(ctx, a.ID, tk.ID); err != nil {
		t.Fatal(err)
	}
	// Canceling again changes nothing and writes no second delivery.
	if _, _, err := e.tk.Cancel(ctx, a.ID, tk.ID); err != nil {
		t.Fatal(err)
	}
	got := deliveriesOf(t, e.store, tk.ID)
	if len(got) != 1 || got[0].State != push.Pending || !got[0].CreatedAt.Equal(e.clock.Now()) {
		t.Fatalf("cancel deliveries: %+v", got)
	}
	var ev a2a.StreamResponse
	if err := jsonUnmarshal(got[0].Event, &ev); err != nil || ev.StatusUpdate.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("event: %s", got[0].Event)
	}
}

func testSigningKeys(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	k1 := signing.KeyRecord{ID: "k1", Algorithm: signing.Algorithm, Private: []byte{1}, CreatedAt: t0}
	for i, want := range []bool{true, false} {
		created, err := s.EnsureSigningKey(ctx, k1)
		if err != nil || created != want {
			t.Fatalf("ensure %d: %v %v", i, created, err)
		}
	}
	k2 := signing.KeyRecord{ID: "k2", Algorithm: signing.Algorithm, Private: []byte{2}, CreatedAt: t0.Add(time.Hour)}
	if err := s.RotateSigningKey(ctx, k2, t0); err != nil {
		t.Fatal(err)
	}
	keys, err := s.SigningKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].ID != "k2" || !keys[0].RetiredAt.IsZero() || keys[1].ID != "k1" ||
		!keys[1].RetiredAt.Equal(k2.CreatedAt) || string(keys[1].Private) != "\x01" {
		t.Fatalf("after a rotation: %+v %v", keys, err)
	}
	if created, err := s.EnsureSigningKey(ctx, k1); err != nil || created {
		t.Fatalf("ensure with a current key: %v %v", created, err)
	}
	// A rotation deletes the keys retired before its purge time.
	k3 := signing.KeyRecord{ID: "k3", Algorithm: signing.Algorithm, Private: []byte{3}, CreatedAt: t0.Add(2 * time.Hour)}
	if err := s.RotateSigningKey(ctx, k3, t0.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	keys, err = s.SigningKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].ID != "k3" || keys[1].ID != "k2" {
		t.Fatalf("after a second rotation: %+v %v", keys, err)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
