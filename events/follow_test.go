package events

import (
	"context"
	"errors"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/tasks"
)

// TestFollowerPublishesAndEnds: a moved task with a stream is read once
// per batch and published; one without is not read; a revocation, or a
// rotation without grace, ends the agent's streams (a rotation with grace
// does not); a task that cannot be read fails the batch.
func TestFollowerPublishesAndEnds(t *testing.T) {
	b := NewBroker(Limits{})
	reads := map[string]int{}
	failing := false
	f := b.Follower(func(_ context.Context, id string) (tasks.Task, error) {
		reads[id]++
		if failing {
			return tasks.Task{}, errors.New("the store is down")
		}
		return tasks.Task{ID: id, State: a2a.TaskStateCompleted}, nil
	})
	ctx := context.Background()
	alice, _ := b.Subscribe("t1", "alice")
	bob, _ := b.Subscribe("t2", "bob")
	moved := func(id string) changelog.Event {
		return changelog.Event{Kind: changelog.TaskMoved, ID: id, Ref: string(a2a.TaskStateCompleted)}
	}
	if err := f.Apply(ctx, []changelog.Event{moved("t1"), moved("t1"), moved("unwatched")}); err != nil {
		t.Fatal(err)
	}
	if got := <-alice.C(); got.ID != "t1" || got.State != a2a.TaskStateCompleted {
		t.Fatalf("alice's stream got %+v", got)
	}
	if reads["t1"] != 1 || reads["unwatched"] != 0 {
		t.Fatalf("reads %v: want t1 read once and the unwatched task not at all", reads)
	}
	graced := changelog.Event{Kind: changelog.AgentRotated, ID: "bob", Ref: "2026-12-02T10:30:00Z"}
	if err := f.Apply(ctx, []changelog.Event{graced}); err != nil || b.Open() != 2 {
		t.Fatalf("a rotation with grace: %v, %d streams open, want both", err, b.Open())
	}
	if err := f.Apply(ctx, []changelog.Event{{Kind: changelog.AgentRevoked, ID: "alice"}, {Kind: changelog.AgentRotated, ID: "bob"}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-alice.C(); ok {
		t.Fatal("alice's stream is still open after her revocation")
	}
	if _, ok := <-bob.C(); ok {
		t.Fatal("bob's stream is still open after a rotation without grace")
	}
	carol, _ := b.Subscribe("t3", "carol")
	defer carol.Close()
	failing = true
	if err := f.Apply(ctx, []changelog.Event{moved("t3")}); err == nil {
		t.Fatal("a task that could not be read did not fail the batch")
	}
}
