package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/tasks"
)

// TaskReader reads a task by id whoever owns it (tasks.Store.GetTask).
type TaskReader func(ctx context.Context, id string) (tasks.Task, error)

// Follower returns the broker as a changelog.Follower: each task.moved
// event whose task has a stream here is read (once per batch, however
// many events name it) and published; agent.revoked, and agent.rotated
// whose old credentials end at once, end the agent's streams.
func (b *Broker) Follower(read TaskReader) changelog.Follower {
	return follower{b: b, read: read}
}

type follower struct {
	b    *Broker
	read TaskReader
}

// Apply implements changelog.Follower. A task it cannot read fails the
// batch, which the runner hands again: a stream misses no transition.
func (f follower) Apply(ctx context.Context, evs []changelog.Event) error {
	var moved []string
	seen := map[string]bool{}
	for _, e := range evs {
		switch {
		case e.Kind == changelog.TaskMoved && !seen[e.ID]:
			seen[e.ID] = true
			moved = append(moved, e.ID)
		case e.Kind == changelog.AgentRevoked, e.Kind == changelog.AgentRotated && e.Ref == "":
			f.b.EndAgent(e.ID)
		}
	}
	for _, id := range moved {
		if !f.b.Watched(id) {
			continue // nobody listens: nothing to read
		}
		t, err := f.read(ctx, id)
		if errors.Is(err, tasks.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("events: read task %s: %w", id, err)
		}
		f.b.Publish(t)
	}
	return nil
}
